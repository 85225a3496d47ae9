/**
 * Running `spec check` and the reference `allium check` as child processes, and comparing them: what check.bench.ts
 * and mixes.bench.ts share. The reference is the binary in `ALLIUM_REF`, else `allium` on PATH
 * (`tools/parity/build-reference.sh` builds it).
 */
import { spawnSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';

export const CLI = resolve('packages/cli/bin/allium-loop');
export const REFERENCE = process.env['ALLIUM_REF'] ?? 'allium';
const referenceVersion = spawnSync(REFERENCE, ['--version'], { encoding: 'utf8' });
/** The reference's `--version`, or undefined when it cannot be run. */
export const REFERENCE_VERSION = referenceVersion.status === 0 ? referenceVersion.stdout.trim() : undefined;

export interface Sample {
  readonly wall: number;
  readonly cpu: number;
  readonly rssMb: number;
  readonly stdout: string;
}

export const median = (values: readonly number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/** The launchers run `node` from PATH: this Node. */
const PATH_WITH_THIS_NODE = `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`;

/** Runs `command args` under /usr/bin/time: wall ms, CPU ms (user + system) and peak RSS. */
export function timed(
  command: string,
  args: readonly string[],
  cwd?: string,
  env?: NodeJS.ProcessEnv,
): Sample {
  const started = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', '%U %S %M', command, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    ...(cwd === undefined ? {} : { cwd }),
    ...(env === undefined ? {} : { env }),
  });
  const wall = performance.now() - started;
  const last = run.stderr.trim().split('\n').pop() ?? '';
  const [user, system, rssKb] = last.split(' ').map(Number);
  return { wall, cpu: ((user ?? 0) + (system ?? 0)) * 1000, rssMb: (rssKb ?? 0) / 1024, stdout: run.stdout };
}

/** Runs the command `bin` (a launcher), or Node on `bin` when it is a `.js` shim. */
export const child = (args: readonly string[], cwd?: string, bin = CLI): Sample =>
  bin.endsWith('.js')
    ? timed(process.execPath, [bin, ...args], cwd)
    : timed(bin, args, cwd, { ...process.env, PATH: PATH_WITH_THIS_NODE });

/** The reference's `check` of `file` (in `cwd`). */
export const referenceCheck = (file: string, cwd?: string): Sample => timed(REFERENCE, ['check', file], cwd);

export const summary = (samples: readonly Sample[]): string =>
  `wall ${median(samples.map((s) => s.wall)).toFixed(0)} ms, cpu ${median(samples.map((s) => s.cpu)).toFixed(0)} ms, peak RSS ${median(samples.map((s) => s.rssMb)).toFixed(0)} MB`;

/** The ratio of the medians of `key`. */
export const ratio = (
  ours: readonly Sample[],
  theirs: readonly Sample[],
  key: 'wall' | 'cpu' | 'rssMb',
): string => (median(ours.map((s) => s[key])) / median(theirs.map((s) => s[key]))).toFixed(2);

/** The median of the wall-time ratios of runs taken side by side. */
export const pairedRatio = (ours: readonly Sample[], theirs: readonly Sample[]): string =>
  median(ours.map((s, i) => s.wall / (theirs[i]?.wall ?? Number.NaN))).toFixed(2);

/** Whether the first runs of both printed the same JSON. */
export const sameOutput = (ours: readonly Sample[], theirs: readonly Sample[]): boolean =>
  ours[0]?.stdout.trimEnd() === theirs[0]?.stdout.trimEnd();

/** Issue 19's targets for `spec check` against the reference: wall time at most 1.0×, peak memory at most 1.5×. */
export const TARGET_WALL = 1;
export const TARGET_RSS = 1.5;

/** One measured case (a spec at a size) against the targets. */
export interface TargetRow {
  readonly label: string;
  readonly ours: readonly Sample[];
  readonly theirs: readonly Sample[];
}

/**
 * The targets' verdict over `rows`, one line: met only where the ratio of the medians and the median of the paired
 * ratios are both within the wall target and the memory ratio is within its target, so a verdict never rests on the
 * more favourable of the two time figures. Every row that misses is named with its figures.
 */
export function targetVerdict(rows: readonly TargetRow[]): string {
  const misses = rows.flatMap(({ label, ours, theirs }) => {
    const wall = Number(ratio(ours, theirs, 'wall'));
    const paired = Number(pairedRatio(ours, theirs));
    const rss = Number(ratio(ours, theirs, 'rssMb'));
    const missed = [
      ...(wall > TARGET_WALL || paired > TARGET_WALL ? [`wall ${wall}× (side by side ${paired}×)`] : []),
      ...(rss > TARGET_RSS ? [`peak RSS ${rss}×`] : []),
    ];
    return missed.length === 0 ? [] : [`${label}: ${missed.join(', ')}`];
  });
  const head = `targets (wall ≤ ${TARGET_WALL.toFixed(1)}×, peak RSS ≤ ${TARGET_RSS}× the reference's): met on ${rows.length - misses.length} of ${rows.length}`;
  return misses.length === 0 ? head : `${head}; not met: ${misses.join('; ')}`;
}

/**
 * `spec check` side by side with the reference on specs of other makes than check.bench.ts's. The reference's time per
 * line depends a great deal on what a spec holds, ours much less, so the one mix check.bench.ts generates (the three v3
 * fixtures) does not settle "at most the reference's time" alone. For each mix of generate-spec.ts (SPEC_MIXES) at 50k
 * and 100k lines it runs the built CLI (through the launcher, as npm links it) and the reference alternately, RUNS
 * times each, and prints the medians of the wall time, the ratios ours/reference (of the medians, and the median of
 * the ratios of the runs side by side), CPU and peak RSS ratios, and whether the JSON outputs are identical. Beside
 * them, the whole command warm (the built CLI's `runCli` with the same arguments, repeated in one Node started as the
 * launcher starts `spec`; after two runs to warm up, the median of RUNS): the work without Node's start or a cold JIT.
 * Its sum with the start-up (an empty spec's check through the launcher, median of RUNS) is the floor: what a run
 * would take if V8 ran our code at its optimised speed from the first call. No cache or start-up saving gets below
 * it; a V8 setting only by what it changes in the warm work, and otherwise only less work per line does. It ends
 * with the targets' verdict and the rows whose floor is already past the reference's wall time.
 *
 *   npx nx run allium-loop:build
 *   ALLIUM_REF=/work/bin/allium-ref node --conditions=development --import tsx tools/bench/spec/mixes.bench.ts
 *
 * MIXES=v3,behaviour picks mixes by name; SIZES=50000 picks sizes. A benchmark, not a test.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SPEC_MALLOC_ARENA_MAX, SPEC_V8_FLAGS } from '../../../packages/cli/src/commands/v8-tuning.js';
import { generateSpec, SPEC_MIXES } from './generate-spec.js';
import {
  REFERENCE,
  REFERENCE_VERSION,
  type Sample,
  child,
  median,
  pairedRatio,
  ratio,
  referenceCheck,
  sameOutput,
  type TargetRow,
  targetVerdict,
} from './side-by-side.js';

/** The built CLI's entry (`npx nx run allium-loop:build`), whose `runCli` the warm measure calls. */
const BUILT_CLI = resolve('packages/cli/dist/index.js');
const RUNS = Number(process.env['RUNS'] ?? 5);
const picked = process.env['MIXES']?.split(',');
const mixes = SPEC_MIXES.filter((mix) => picked === undefined || picked.includes(mix.name));
const sizes = (process.env['SIZES'] ?? '50000,100000').split(',').map(Number);
if (REFERENCE_VERSION === undefined) {
  console.error(
    `the reference (${REFERENCE}) cannot be run: set ALLIUM_REF (tools/parity/build-reference.sh builds it)`,
  );
  process.exit(2);
}

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
/**
 * The whole `spec check --json name`, warm: a child Node started with the flags and the malloc arena the launcher gives
 * `spec` runs the built CLI's `runCli` RUNS + 2 times in one process (its output counted, not kept) and prints the
 * time of each; the median of all but the first two, in ms.
 */
function warmCommand(name: string): number {
  const script = `
    import { runCli } from ${JSON.stringify(pathToFileURL(BUILT_CLI).href)};
    const times = [];
    for (let i = 0; i < ${RUNS + 2}; i += 1) {
      let written = 0;
      const count = (text) => { written += text.length; };
      const io = { stdout: count, stderr: count, cwd: process.cwd(), env: process.env, isTTY: false };
      const started = performance.now();
      await runCli(['spec', 'check', '--json', ${JSON.stringify(name)}], io, { version: 'bench' });
      times.push(performance.now() - started);
      if (written === 0) throw new Error('spec check printed nothing');
    }
    console.log(JSON.stringify(times.slice(2)));`;
  const run = spawnSync(process.execPath, [...SPEC_V8_FLAGS, '--input-type=module', '-e', script], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, MALLOC_ARENA_MAX: SPEC_MALLOC_ARENA_MAX },
  });
  if (run.status !== 0) throw new Error(`the warm check of ${name} failed: ${run.stderr}`);
  return median(JSON.parse(run.stdout) as number[]);
}

const dir = mkdtempSync(join(tmpdir(), 'mixes-bench-'));
try {
  console.log(`load average ${load()}; medians of ${RUNS} runs; reference ${REFERENCE_VERSION}`);
  writeFileSync(join(dir, 'empty.allium'), '-- allium: 3\n');
  const startup = median(
    Array.from({ length: RUNS }, () => child(['spec', 'check', '--json', 'empty.allium'], dir).wall),
  );
  console.log(`start-up (spec check --json, an empty spec, through the launcher): ${startup.toFixed(0)} ms`);
  console.log(
    '| mix | lines | ours wall | ours warm (the command in a warm process) | reference wall | ours ÷ reference: wall (side by side), CPU, peak RSS | floor ÷ reference | JSON |',
  );
  console.log(
    '| --- | ----- | --------- | ----------------------------------------- | -------------- | ---------------------------------------------------- | ----------------- | ---- |',
  );
  const rows: TargetRow[] = [];
  const floors: string[] = [];
  for (const mix of mixes) {
    for (const size of sizes) {
      const name = `${mix.name}-${size}.allium`;
      const text = generateSpec(size, mix);
      writeFileSync(join(dir, name), text);
      const warm = warmCommand(name);
      const ours: Sample[] = [];
      const theirs: Sample[] = [];
      for (let i = 0; i < RUNS; i += 1) {
        // Alternating which goes first, so neither always runs just after the other.
        if (i % 2 === 0) ours.push(child(['spec', 'check', '--json', name], dir));
        theirs.push(referenceCheck(name, dir));
        if (i % 2 === 1) ours.push(child(['spec', 'check', '--json', name], dir));
      }
      const wall = (samples: readonly Sample[]): string =>
        `${(median(samples.map((s) => s.wall)) / 1000).toFixed(2)} s`;
      const floor = (startup + warm) / median(theirs.map((s) => s.wall));
      console.log(
        `| ${mix.name} | ${size / 1000}k | ${wall(ours)} | ${(warm / 1000).toFixed(2)} s | ${wall(theirs)} | ${ratio(ours, theirs, 'wall')}× (${pairedRatio(ours, theirs)}×), ${ratio(ours, theirs, 'cpu')}×, ${ratio(ours, theirs, 'rssMb')}× | ${floor.toFixed(2)}× | ${sameOutput(ours, theirs) ? 'identical' : 'DIFFERS'} |`,
      );
      const label = `${mix.name} ${size / 1000}k`;
      rows.push({ label, ours, theirs });
      if (floor > 1) floors.push(`${label} ${floor.toFixed(2)}×`);
    }
  }
  console.log(targetVerdict(rows));
  console.log(
    floors.length === 0
      ? `floor (start-up plus the command warm) within the reference's wall time on every row`
      : `floor (start-up plus the command warm) past the reference's wall time, so out of reach without less work per line: ${floors.join('; ')}`,
  );
  console.log(`load average after: ${load()}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

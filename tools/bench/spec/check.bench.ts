/**
 * `spec check` side by side with the reference `allium check` (the binary in `ALLIUM_REF`, else `allium` on PATH;
 * `tools/parity/build-reference.sh` builds it), or, without it, against the reference's published figures
 * (0.25 s at 50k lines, 0.57 s at 100k, 96 MB at 100k, measured on another machine).
 *
 *   npx nx run allium-loop:build && node packages/cli/package/build.mjs
 *   node --conditions=development --import tsx tools/bench/spec/check.bench.ts
 *
 * For 50k and 100k generated lines it prints the median of RUNS runs of
 * - throughput: `checkReports` in this process (wall and CPU ms), start-up excluded;
 * - end to end: `packages/cli/bin/allium-loop spec check --json big.allium` in a child, the command as npm links it
 *   (wall ms, CPU ms of the child, peak RSS from /usr/bin/time), which includes start-up, and the reference's `check`
 *   on the same file,
 *   the two run alternately so both see the same load; the ratios ours/reference; whether the outputs are equal;
 * - the same for the npm package (`packages/cli/package/out`, what `npm install allium-loop` gets), when it has been
 *   built: its `spec` entry is built as the repository's is (package/spec-entry.mjs), so the two rows differ only by
 *   the machine;
 * - start-up alone: Node itself (`node -e 0`), and the same children running `--version` and `spec check --json` on an
 *   empty spec.
 * Each ratio is given twice: of the medians, and the median of the ratios of the runs taken side by side (the two
 * see the same load, so this one moves less with the machine). When `NODE_EXTRA_CA_CERTS` is set, Node reads those
 * certificates at start-up, before any of our code runs (40–70 ms where it names the system bundle); the launcher
 * starts `spec` without it (bin/allium-loop), so its runs are those of a machine without the variable whether it is
 * set or not, and the npm package is then also measured through its Node shim (`node bin/allium-loop.js`), which
 * reads them: what the launcher saves.
 * A benchmark, not a test; the machine is shared, so the load average is printed with the figures. The spec is
 * generate-spec.ts's default mix; mixes.bench.ts compares the two on the others, where the reference is faster.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkReports } from '@allium-loop/allium';
import { generateSpec } from './generate-spec.js';
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
  summary,
  type TargetRow,
  targetVerdict,
  timed,
} from './side-by-side.js';

const RUNS = Number(process.env['RUNS'] ?? 5);
const PACKAGE = resolve('packages/cli/package/out/bin/allium-loop');
const havePackage = existsSync(PACKAGE);
const haveReference = REFERENCE_VERSION !== undefined;

/** The environment without `NODE_EXTRA_CA_CERTS`, or undefined when it is not set. */
const extraCerts = process.env['NODE_EXTRA_CA_CERTS'];
const withoutExtraCerts =
  extraCerts === undefined
    ? undefined
    : Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_EXTRA_CA_CERTS'));

const dir = mkdtempSync(join(tmpdir(), 'check-bench-'));
try {
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; medians of ${RUNS} runs`,
  );
  console.log(
    haveReference
      ? `reference: ${REFERENCE} (${REFERENCE_VERSION})`
      : 'reference: not found (set ALLIUM_REF); compare with 0.25 s at 50k, 0.57 s and 96 MB at 100k',
  );
  console.log(
    `Node alone (node -e 0): ${summary(Array.from({ length: RUNS }, () => timed(process.execPath, ['-e', '0'])))}`,
  );
  if (withoutExtraCerts !== undefined)
    console.log(
      `Node alone, NODE_EXTRA_CA_CERTS unset: ${summary(Array.from({ length: RUNS }, () => timed(process.execPath, ['-e', '0'], undefined, withoutExtraCerts)))}`,
    );
  const startup = Array.from({ length: RUNS }, () => child(['--version']));
  console.log(`start-up (--version): ${summary(startup)}`);
  const empty = join(dir, 'empty.allium');
  writeFileSync(empty, '-- allium: 3\n');
  console.log(
    `start-up (spec check --json, empty spec): ${summary(Array.from({ length: RUNS }, () => child(['spec', 'check', '--json', empty])))}`,
  );
  if (havePackage)
    console.log(
      `start-up, npm package (spec check --json, empty spec): ${summary(Array.from({ length: RUNS }, () => child(['spec', 'check', '--json', empty], undefined, PACKAGE)))}`,
    );
  else console.log('npm package: not built (node packages/cli/package/build.mjs); its rows are left out');
  const rows: TargetRow[] = [];
  for (const size of [50_000, 100_000]) {
    const text = generateSpec(size);
    const name = `big-${size}.allium`;
    const file = join(dir, name);
    writeFileSync(file, text);
    checkReports([{ path: 'warm.allium', text: generateSpec(2_000) }], 'check');
    const walls: number[] = [];
    const cpus: number[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      checkReports([{ path: name, text }], 'check');
      walls.push(performance.now() - started);
      const used = process.cpuUsage(cpu);
      cpus.push((used.user + used.system) / 1000);
    }
    const ours: Sample[] = [];
    const packaged: Sample[] = [];
    const packagedShim: Sample[] = [];
    const theirs: Sample[] = [];
    const shim = havePackage && extraCerts !== undefined ? `${PACKAGE}.js` : undefined;
    for (let i = 0; i < RUNS; i += 1) {
      ours.push(child(['spec', 'check', '--json', name], dir));
      if (havePackage) packaged.push(child(['spec', 'check', '--json', name], dir, PACKAGE));
      if (shim !== undefined) packagedShim.push(child(['spec', 'check', '--json', name], dir, shim));
      if (haveReference) theirs.push(referenceCheck(name, dir));
    }
    console.log(
      `${String(size).padStart(7)} lines  in-process check: wall ${median(walls).toFixed(0)} ms, cpu ${median(cpus).toFixed(0)} ms`,
    );
    const pad = ' '.repeat(14);
    console.log(`${pad}ours end to end:      ${summary(ours)}`);
    if (havePackage) console.log(`${pad}npm package:          ${summary(packaged)}`);
    if (shim !== undefined)
      console.log(`${pad}npm package, node bin/allium-loop.js: ${summary(packagedShim)}`);
    if (haveReference) {
      console.log(`${pad}reference end to end: ${summary(theirs)}`);
      const compare = (label: string, samples: readonly Sample[]): void => {
        const same = sameOutput(samples, theirs);
        console.log(
          `${pad}${label}/reference: wall ${ratio(samples, theirs, 'wall')}× (side by side ${pairedRatio(samples, theirs)}×), cpu ${ratio(samples, theirs, 'cpu')}×, peak RSS ${ratio(samples, theirs, 'rssMb')}×; JSON output ${same ? 'identical' : 'DIFFERS'}`,
        );
      };
      compare('ours', ours);
      rows.push({ label: `${size / 1000}k lines`, ours, theirs });
      if (havePackage) compare('npm package', packaged);
      if (shim !== undefined) compare('npm package, node bin/allium-loop.js', packagedShim);
    }
  }
  if (haveReference)
    console.log(
      `${targetVerdict(rows)}\n(this spec is one mix, the three v3 fixtures'; mixes.bench.ts measures the others)`,
    );
  console.log(
    `load average after: ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

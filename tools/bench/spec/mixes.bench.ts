/**
 * `spec check` side by side with the reference on specs of other makes than check.bench.ts's. The reference's time per
 * line depends a great deal on what a spec holds, ours much less, so the one mix check.bench.ts generates (the three v3
 * fixtures) does not settle "at most the reference's time" alone. For each mix of generate-spec.ts (SPEC_MIXES) at 50k
 * and 100k lines it runs the built CLI (through the launcher, as npm links it) and the reference alternately, RUNS
 * times each, and prints the medians of the wall time, the ratios ours/reference (of the medians, and the median of
 * the ratios of the runs side by side), CPU and peak RSS ratios, and whether the JSON outputs are identical. Beside
 * them, the check warm in this process (`checkReports` and the JSON of its reports, after two runs to warm up; the
 * median of RUNS): the work per line without Node's start or a cold JIT. It ends with the targets' verdict.
 *
 *   npx nx run allium-loop:build
 *   ALLIUM_REF=/work/bin/allium-ref node --conditions=development --import tsx tools/bench/spec/mixes.bench.ts
 *
 * MIXES=v3,behaviour picks mixes by name; SIZES=50000 picks sizes. A benchmark, not a test.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkReports } from '@allium-loop/allium';
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
const dir = mkdtempSync(join(tmpdir(), 'mixes-bench-'));
try {
  console.log(`load average ${load()}; medians of ${RUNS} runs; reference ${REFERENCE_VERSION}`);
  console.log(
    '| mix | lines | ours wall | ours warm, in process | reference wall | ours ÷ reference: wall (side by side), CPU, peak RSS | JSON |',
  );
  console.log(
    '| --- | ----- | --------- | --------------------- | -------------- | ---------------------------------------------------- | ---- |',
  );
  const rows: TargetRow[] = [];
  for (const mix of mixes) {
    for (const size of sizes) {
      const name = `${mix.name}-${size}.allium`;
      const text = generateSpec(size, mix);
      writeFileSync(join(dir, name), text);
      const warm: number[] = [];
      for (let i = 0; i < RUNS + 2; i += 1) {
        const started = performance.now();
        JSON.stringify(checkReports([{ path: name, text }], 'check'));
        if (i >= 2) warm.push(performance.now() - started);
      }
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
      console.log(
        `| ${mix.name} | ${size / 1000}k | ${wall(ours)} | ${(median(warm) / 1000).toFixed(2)} s | ${wall(theirs)} | ${ratio(ours, theirs, 'wall')}× (${pairedRatio(ours, theirs)}×), ${ratio(ours, theirs, 'cpu')}×, ${ratio(ours, theirs, 'rssMb')}× | ${sameOutput(ours, theirs) ? 'identical' : 'DIFFERS'} |`,
      );
      rows.push({ label: `${mix.name} ${size / 1000}k`, ours, theirs });
    }
  }
  console.log(targetVerdict(rows));
  console.log(`load average after: ${load()}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

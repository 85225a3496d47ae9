/**
 * `spec check .` on folders of many small specs, side by side with the reference: what the single-file benches do
 * not see, the cost of a check set (every file's imports, what its importers give it, which of its names they use).
 * A benchmark, not a test; `robustness.test.ts` holds the growth linear.
 *
 *   npx nx run allium-loop:build
 *   ALLIUM_REF=/work/bin/allium-ref node --conditions=development --import tsx tools/bench/spec/folders.bench.ts
 *
 * Two shapes at 750, 1,500 and 3,000 files (FILES=… picks others): `chain`, each file importing the next and listening
 * for a trigger it offers (a ring: the last imports the first), and `star`, one file importing all the others. For
 * each it prints the medians of RUNS (default 5) alternating runs of the built CLI (through the launcher) and of the
 * reference, the ratios, ours per doubling of the files (about 2.0 when linear, 4.0 when quadratic), and whether
 * the JSON outputs are identical.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  child,
  median,
  pairedRatio,
  ratio,
  REFERENCE,
  REFERENCE_VERSION,
  type Sample,
  sameOutput,
  timed,
} from './side-by-side.js';

const RUNS = Number(process.env['RUNS'] ?? 5);
const COUNTS = (process.env['FILES'] ?? '750,1500,3000').split(',').map(Number);

const SHAPES: Record<string, (n: number) => Map<string, string>> = {
  chain: (n) =>
    new Map(
      Array.from({ length: n }, (_, i) => {
        const next = (i + 1) % n;
        return [
          `f${i}.allium`,
          `-- allium: 3\nuse "./f${next}.allium" as next\nentity E${i} {\n    x: Integer\n}\n` +
            `rule R${i} {\n    when: next/Go${next}(a)\n    ensures: Go${i}(a)\n}\n`,
        ];
      }),
    ),
  star: (n) =>
    new Map([
      [
        'main.allium',
        `-- allium: 3\n${Array.from({ length: n - 1 }, (_, i) => `use "./g${i}.allium" as g${i}\n`).join('')}` +
          'entity M {\n    x: Integer\n}\n',
      ],
      ...Array.from(
        { length: n - 1 },
        (_, i) => [`g${i}.allium`, `-- allium: 3\nentity G${i} {\n    x: Integer\n}\n`] as [string, string],
      ),
    ]),
};

const root = mkdtempSync(join(tmpdir(), 'allium-folders-bench-'));
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; medians of ${RUNS} runs; reference ${REFERENCE_VERSION ?? '(not found)'}`,
);
console.log(
  '| shape | files | ours wall | reference wall | ours ÷ reference: wall (side by side), peak RSS | ours per doubling | JSON |',
);
console.log(
  '| ----- | ----- | --------- | -------------- | ---------------------------------------------- | ----------------- | ---- |',
);
try {
  for (const [shape, make] of Object.entries(SHAPES)) {
    let previous: number | undefined;
    for (const count of COUNTS) {
      const folder = join(root, `${shape}-${count}`);
      mkdirSync(folder);
      for (const [name, text] of make(count)) writeFileSync(join(folder, name), text);
      const ours: Sample[] = [];
      const theirs: Sample[] = [];
      for (let run = 0; run < RUNS; run += 1) {
        ours.push(child(['spec', 'check', '--json', '.'], folder));
        if (REFERENCE_VERSION !== undefined) theirs.push(timed(REFERENCE, ['check', '.'], folder));
      }
      const wall = median(ours.map((s) => s.wall));
      const growth = previous === undefined ? '' : `${(wall / previous).toFixed(2)}×`;
      previous = wall;
      const against =
        theirs.length === 0
          ? ['–', '–', '–']
          : [
              `${(median(theirs.map((s) => s.wall)) / 1000).toFixed(2)} s`,
              `${ratio(ours, theirs, 'wall')}× (${pairedRatio(ours, theirs)}×), ${ratio(ours, theirs, 'rssMb')}×`,
              sameOutput(ours, theirs) ? 'identical' : 'DIFFERENT',
            ];
      console.log(
        `| ${shape} | ${count} | ${(wall / 1000).toFixed(2)} s | ${against[0]} | ${against[1]} | ${growth} | ${against[2]} |`,
      );
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
console.log(
  `load average after: ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);

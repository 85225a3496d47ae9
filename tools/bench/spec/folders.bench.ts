/**
 * `spec check .` on folders of many small specs, side by side with the reference: what the single-file benches do
 * not see, the cost of a check set (every file's imports, what its importers give it, which of its names they use).
 * A benchmark, not a test; `robustness.test.ts` holds the growth linear.
 *
 *   npx nx run allium-loop:build
 *   ALLIUM_REF=/work/bin/allium-ref node --conditions=development --import tsx tools/bench/spec/folders.bench.ts
 *
 * Five shapes at 750, 1,500 and 3,000 files (FILES=… picks other counts, SHAPES=… some of the shapes): `chain`, each
 * file importing the next and listening for a trigger it offers (a ring: the last imports the first); `star`, one file
 * importing all the others; `hub`, a star whose importer also has a rule, a surface and a field through each alias;
 * `plain`, a star whose importer listens for a plain trigger each of the others offers; and `reverse`, every file
 * importing one that declares an entity, a command and a rule for each of them (the reference's time grows about
 * fivefold per doubling there: some minutes at 3,000 files). For
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
const PICKED = process.env['SHAPES']?.split(',');

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
  hub: (n) =>
    new Map([
      [
        'main.allium',
        `-- allium: 3\nactor User {\n    identified_by: email\n}\n` +
          Array.from(
            { length: n - 1 },
            (_, i) =>
              `use "./g${i}.allium" as g${i}\nentity M${i} {\n    y: g${i}/G.x\n}\n` +
              `rule R${i} {\n    when: g${i}/Go(o)\n    requires: o.status = open\n    ensures: o.status = closed\n}\n` +
              `surface S${i} {\n    facing u: User\n    context o: g${i}/G\n    provides: g${i}/Go(o)\n}\n`,
          ).join(''),
      ],
      ...Array.from(
        { length: n - 1 },
        (_, i) =>
          [
            `g${i}.allium`,
            `-- allium: 3\nentity G {\n    x: Integer\n    status: open | closed | done\n}\n` +
              `rule Start {\n    when: Go(o)\n    ensures: o.status = done\n}\n`,
          ] as [string, string],
      ),
    ]),
  plain: (n) =>
    new Map([
      [
        'main.allium',
        '-- allium: 3\n' +
          Array.from(
            { length: n - 1 },
            (_, i) =>
              `use "./g${i}.allium" as g${i}\nrule R${i} {\n    when: Go${i}(o)\n    ensures: Done${i}(o)\n}\n`,
          ).join(''),
      ],
      ...Array.from(
        { length: n - 1 },
        (_, i) =>
          [
            `g${i}.allium`,
            `-- allium: 3\nactor User {\n    identified_by: email\n}\n` +
              `entity G {\n    x: Integer\n    status: open | closed\n}\n` +
              `surface S {\n    facing u: User\n    context o: G\n    provides: Go${i}(o)\n}\n`,
          ] as [string, string],
      ),
    ]),
  reverse: (n) =>
    new Map([
      [
        'common.allium',
        '-- allium: 3\nactor User {\n    identified_by: email\n}\n' +
          Array.from(
            { length: n - 1 },
            (_, i) =>
              `entity C${i} {\n    x: Integer\n    status: open | closed | done\n}\n` +
              `surface T${i} {\n    facing u: User\n    provides: Cmd${i}(b: C${i})\n}\n` +
              `rule Q${i} {\n    when: Cmd${i}(b)\n    ensures: Ev${i}(b)\n}\n`,
          ).join(''),
      ],
      ...Array.from(
        { length: n - 1 },
        (_, i) =>
          [
            `f${i}.allium`,
            `-- allium: 3\nuse "./common.allium" as c\n` +
              `rule R {\n    when: c/Cmd${i}(b)\n    requires: b.status = open\n    ensures: b.status = closed\n}\n` +
              `entity F {\n    y: c/C${i}.x\n}\n`,
          ] as [string, string],
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
    if (PICKED !== undefined && !PICKED.includes(shape)) continue;
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

/**
 * Linearity of `spec check` on hostile input (issue 19 item 5), a benchmark rather than a timed test.
 *
 *   node --conditions=development --import tsx tools/bench/spec/hostile.bench.ts   # RUNS=3 by default
 *
 * For each hostile shape at about 1, 2 and 4 MB it prints the best of RUNS CPU times of `checkReports` in this
 * process (the bytes decoded as the CLI decodes a file: UTF-8, invalid sequences become U+FFFD) and the ratio of
 * each size's time to the previous one's: a linear checker shows about 2.0 per doubling, a quadratic one 4.0.
 * The shapes: the generated spec with a byte flipped every 100 bytes, the generated spec cut mid-block,
 * 100,000-deep parentheses repeated, one line of `x.a + …` terms, a rule with an annotation every few lines, and
 * invalid UTF-8 sprinkled through the spec.
 * The focused tests that hostile input never crashes and prints only JSON are `robustness.test.ts` and
 * `packages/cli/src/commands/spec.fuzz.test.ts`; this prints how the cost grows.
 */
import { loadavg } from 'node:os';
import { checkReports } from '@allium-loop/allium';
import { generateSpec } from './generate-spec.js';

const RUNS = Number(process.env['RUNS'] ?? 3);
const MB = 1 << 20;

/** A small deterministic PRNG (mulberry32), so the shapes are the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The generated spec's bytes, about `bytes` long (about 32 bytes a line). */
const specBytes = (bytes: number): Buffer => Buffer.from(generateSpec(Math.ceil(bytes / 32)), 'utf8');

const SHAPES: Record<string, (bytes: number) => Buffer> = {
  'byte flips (1 per 100 bytes)': (bytes) => {
    const out = Buffer.from(specBytes(bytes));
    const next = random(19);
    for (let i = 0; i < out.length; i += 100) out[i + Math.floor(next() * 100)] = Math.floor(next() * 256);
    return out;
  },
  'truncated mid-block': (bytes) => {
    const out = specBytes(bytes);
    return out.subarray(0, out.lastIndexOf('{') + 1);
  },
  'deep nesting (100,000-deep parentheses, repeated)': (bytes) => {
    const unit = `rule R {\n  when: Go(x)\n  requires: ${'('.repeat(100_000)}x${')'.repeat(100_000)}\n}\n`;
    return Buffer.from(`-- allium: 3\n${unit.repeat(Math.max(1, Math.round(bytes / unit.length)))}`);
  },
  'one long line': (bytes) =>
    Buffer.from(`-- allium: 3\nrule R { when: Go(x) requires: ${'x.a + '.repeat(bytes / 6)}1 }\n`),
  'annotations (a rule with `@guidance` every 5 lines)': (bytes) => {
    // Each annotation looks for its comment body from its own line: counting lines from the top of the file made
    // this shape quadratic (0.22 s of a 100k-line check) until wave six's fourth pass.
    const unit = 'rule R {\n  when: Go()\n  ensures: Done()\n  @guidance\n    -- off-peak only\n}\n';
    return Buffer.from(`-- allium: 3\n${unit.repeat(Math.max(1, Math.round(bytes / unit.length)))}`);
  },
  'invalid UTF-8 (every 500 bytes)': (bytes) => {
    const spec = specBytes(bytes);
    const parts: Buffer[] = [];
    for (let i = 0; i < spec.length; i += 500)
      parts.push(spec.subarray(i, i + 500), Buffer.from([0xff, 0xc3, 0x28, 0xed, 0xa0, 0x80]));
    return Buffer.concat(parts);
  },
};

function cpuMs(text: string): number {
  const started = process.cpuUsage();
  checkReports([{ path: 'hostile.allium', text }], 'check');
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}; best of ${RUNS} runs, CPU ms`,
);
checkReports([{ path: 'warm.allium', text: generateSpec(2_000) }], 'check');
for (const [name, make] of Object.entries(SHAPES)) {
  let previous: number | undefined;
  const cells: string[] = [];
  for (const size of [1, 2, 4]) {
    const text = make(size * MB).toString('utf8');
    const best = Math.min(...Array.from({ length: RUNS }, () => cpuMs(text)));
    cells.push(
      `${(text.length / MB).toFixed(1)} MB ${best.toFixed(0)} ms${previous === undefined ? '' : ` (×${(best / previous).toFixed(2)})`}`,
    );
    previous = best;
  }
  console.log(`${name.padEnd(50)} ${cells.join('  ')}`);
}

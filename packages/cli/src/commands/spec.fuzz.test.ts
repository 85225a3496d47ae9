import { isUtf8 } from 'node:buffer';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { specCommand } from './spec.js';

const SPEC = `-- allium: 3
entity Order {
    status: placed | shipped | delivered
    total: Integer
    transitions status {
        placed -> shipped
        shipped -> delivered
        terminal: delivered
    }
}
config {
    limit: Integer = 3
}
rule Ship {
    when: Dispatch(order)
    requires: order.status = placed and order.total < config.limit
    ensures:
        order.status = shipped
        Shipped(order: order)
}
surface Desk {
    facing clerk: Clerk
    context order: Order
    provides: Dispatch(order) when order.total > 0
}
open question "Who pays?"
`;

/** A small deterministic PRNG (mulberry32), so failures reproduce. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Hostile files: byte flips, truncations, 10,000-deep nesting, a 1 MB line, invalid UTF-8. */
function hostileFiles(): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const base = Buffer.from(SPEC, 'utf8');
  const next = random(19);
  // Any byte (most of these are then not UTF-8, which `spec` refuses), and ASCII bytes only (garbled text it parses).
  for (let i = 0; i < 120; i += 1) {
    const bytes = Buffer.from(base);
    for (let flips = 1 + Math.floor(next() * 4); flips > 0; flips -= 1)
      bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 256);
    files.set(`flip-${i}.allium`, bytes);
  }
  for (let i = 0; i < 120; i += 1) {
    const bytes = Buffer.from(base);
    for (let flips = 1 + Math.floor(next() * 4); flips > 0; flips -= 1)
      bytes[Math.floor(next() * bytes.length)] = Math.floor(next() * 128);
    files.set(`ascii-flip-${i}.allium`, bytes);
  }
  for (let cut = 0; cut < base.length; cut += 11) files.set(`cut-${cut}.allium`, base.subarray(0, cut));
  const rule = (requires: string): string =>
    `-- allium: 3\nrule R {\n  when: Go(x)\n  requires: ${requires}\n  ensures: Done()\n}\n`;
  files.set('deep-parens.allium', Buffer.from(rule(`${'('.repeat(10_000)}x${')'.repeat(10_000)}`)));
  files.set('deep-calls.allium', Buffer.from(rule(`${'f('.repeat(10_000)}x${')'.repeat(10_000)}`)));
  files.set('deep-blocks.allium', Buffer.from(`-- allium: 3\n${'entity A {\n'.repeat(10_000)}`));
  // Postfix chains, which once had no nesting limit: `plan` overflowed its stack on the members, `check` on the calls.
  files.set('member-chain.allium', Buffer.from(rule(`x${'.a'.repeat(20_000)}`)));
  files.set('call-chain.allium', Buffer.from(rule(`f${'(x.a)'.repeat(20_000)}`)));
  // Chains inside chains, each within the limits, about 31,000 levels of tree: once every command overflowed its stack.
  const nested = (level: number): string =>
    level === 250 ? 'x.a' : `(${nested(level + 1)})${' + x.a'.repeat(Math.max(0, 248 - level))}`;
  files.set('nested-chains.allium', Buffer.from(rule(`${nested(0)} > 0`)));
  files.set(
    'long-line.allium',
    Buffer.from(`-- allium: 3\nrule R { when: Go(x) requires: ${'x.a + '.repeat(175_000)}1 }\n`),
  );
  files.set(
    'invalid-utf8.allium',
    Buffer.concat([
      base.subarray(0, 40),
      Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]),
      base.subarray(40),
    ]),
  );
  return files;
}

/** Splits concatenated pretty JSON documents (each ends with a `}` alone on its line). */
function documents(out: string): unknown[] {
  return out
    .split(/(?<=^\})\n/m)
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => JSON.parse(chunk) as unknown);
}

let dir = '';
let files = new Map<string, Buffer>();
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'spec-fuzz-'));
  files = hostileFiles();
  for (const [name, bytes] of files) await writeFile(join(dir, name), bytes);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('allium-loop spec --json on hostile input', () => {
  // A file whose bytes are not UTF-8 is refused, as the reference refuses it: no report, a message, exit 1. Which they
  // are is told by Node's own UTF-8 validator, not by the decoder `spec` uses.
  const text = (): string[] => [...files.keys()].filter((name) => isUtf8(files.get(name)!));
  const refused = (): string[] => [...files.keys()].filter((name) => !isUtf8(files.get(name)!));

  it('the hostile files include text that is not UTF-8, and text that is', () => {
    expect(refused()).toContain('invalid-utf8.allium');
    expect(text().length).toBeGreaterThan(150);
  });

  it.each(['check', 'analyse'])(
    '%s prints only JSON, one object per UTF-8 file, refuses the others by name, and exits 1',
    async (action) => {
      const io = createRecordingIo(dir);
      const code = await specCommand.run([action, '--json', '.'], io);
      expect(code).toBe(1);
      const docs = documents(io.out()) as { command: string; spec_file: string }[];
      // Named as the reference names them: the folder as given ('.'), then the file's name.
      expect(docs.map((d) => d.spec_file).sort()).toEqual(
        text()
          .map((name) => `./${name}`)
          .sort(),
      );
      expect(docs.every((d) => d.command === action)).toBe(true);
      expect(
        io
          .err()
          .split('\n')
          .filter((line) => line !== '')
          .sort(),
      ).toEqual(
        refused()
          .map((name) => `allium-loop spec ${action}: cannot read './${name}': it is not UTF-8 text`)
          .sort(),
      );
    },
    120_000,
  );

  it.each(['model', 'plan'])(
    '%s prints one JSON object for every hostile UTF-8 file, and refuses the others',
    async (action) => {
      for (const name of files.keys()) {
        const io = createRecordingIo(dir);
        const code = await specCommand.run([action, '--json', name], io);
        if (isUtf8(files.get(name)!)) {
          expect([0, 1]).toContain(code);
          expect(documents(io.out())).toHaveLength(1);
        } else {
          expect(code).toBe(1);
          expect(io.out()).toBe('');
          expect(io.err()).toBe(`allium-loop spec ${action}: cannot read '${name}': it is not UTF-8 text\n`);
        }
      }
    },
    120_000,
  );
});

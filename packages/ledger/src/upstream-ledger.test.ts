import { describe, expect, it } from 'vitest';
import { decodeLedgerText } from './ledger-codec.js';
import { readUpstreamLedger, upstreamTestHash } from './upstream-ledger.js';

const HEX = 'a'.repeat(64);

describe('readUpstreamLedger', () => {
  it('recognises a ledger with only the upstream fields (extra fields allowed by the schema are ignored)', () => {
    const doc = { goal: 'g', mode: 'code-first', tick: 3, open_questions: ['q'], note: 'extra' };
    expect(readUpstreamLedger(doc)).toMatchObject({ kind: 'upstream', ledger: { goal: 'g', tick: 3 } });
  });

  it('leaves a document holding any allium-loop key to the engine path', () => {
    expect(readUpstreamLedger({ goal: 'g', mode: 'spec-first', tick: 1, schemaVersion: 3 })).toEqual({
      kind: 'engine',
    });
    expect(readUpstreamLedger({ goal: 'g', mode: 'spec-first', tick: 1, runKind: 'spec' }).kind).toBe(
      'engine',
    );
    expect(readUpstreamLedger([1, 2]).kind).toBe('engine');
  });

  it('reports why a foreign document is not a valid upstream ledger', () => {
    const read = readUpstreamLedger({ goal: 'g', mode: 'tests-first', tick: 1.5 });
    expect(read.kind).toBe('invalid');
    if (read.kind === 'invalid') expect(read.issues.join('\n')).toMatch(/mode[\s\S]*tick/);
  });

  it('reads sha256 hashes with or without the prefix, and nothing else', () => {
    expect(upstreamTestHash(`sha256:${HEX}`)).toBe(HEX);
    expect(upstreamTestHash(HEX)).toBe(HEX);
    expect(upstreamTestHash('md5:abc')).toBeUndefined();
    expect(upstreamTestHash(7)).toBeUndefined();
  });
});

describe('decodeLedgerText on an upstream ledger', () => {
  it('fails as upstream_ledger carrying the document, or schema_invalid with a clear first line', () => {
    const up = decodeLedgerText(JSON.stringify({ goal: 'g', mode: 'spec-first', tick: 0 }));
    expect(up.ok).toBe(false);
    if (!up.ok) {
      expect(up.issues.reason).toBe('upstream_ledger');
      expect(up.issues.upstream).toMatchObject({ goal: 'g', mode: 'spec-first', tick: 0 });
    }
    const bad = decodeLedgerText(JSON.stringify({ goal: 'g', mode: 'spec-first' }));
    expect(bad.ok).toBe(false);
    if (!bad.ok) {
      expect(bad.issues.reason).toBe('schema_invalid');
      expect(bad.issues.issues[0]).toContain('not a valid upstream Allium ledger (ledger.schema.json)');
    }
  });
});

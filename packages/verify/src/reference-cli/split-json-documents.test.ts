import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { splitJsonDocuments } from './split-json-documents.js';

describe('splitJsonDocuments', () => {
  it('splits pretty documents printed one after another', () => {
    const text = `${JSON.stringify({ a: 1 }, null, 2)}\n${JSON.stringify({ b: [1, { c: '}' }] }, null, 2)}\n`;
    expect(splitJsonDocuments(text)).toEqual({ documents: [{ a: 1 }, { b: [1, { c: '}' }] }], unparsed: '' });
  });

  it('handles braces and escaped quotes inside strings, and documents with no gap', () => {
    const text = '{"m":"a \\"{\\" b"}{"n":"]"}[1,2]';
    expect(splitJsonDocuments(text).documents).toEqual([{ m: 'a "{" b' }, { n: ']' }, [1, 2]]);
  });

  it('returns a truncated tail and stray text as unparsed', () => {
    const result = splitJsonDocuments('warning: something\n{"a":1}\n{"b": [1, 2');
    expect(result.documents).toEqual([{ a: 1 }]);
    expect(result.unparsed).toBe('warning: something\n{"b": [1, 2');
  });

  it('returns a balanced but invalid document as unparsed', () => {
    expect(splitJsonDocuments('{"a": tru}{"b":2}')).toEqual({
      documents: [{ b: 2 }],
      unparsed: '{"a": tru}',
    });
  });

  it('recovers every concatenated document (property)', () => {
    const json = fc.jsonValue().filter((value) => typeof value === 'object' && value !== null);
    fc.assert(
      fc.property(fc.array(json, { maxLength: 6 }), fc.boolean(), (values, pretty) => {
        const text = values
          .map((value) => JSON.stringify(value, null, pretty ? 2 : undefined))
          .join(pretty ? '\n' : '');
        const result = splitJsonDocuments(text);
        expect(result.unparsed).toBe('');
        expect(result.documents).toEqual(JSON.parse(JSON.stringify(values)));
      }),
      { numRuns: 200 },
    );
  });

  it('never throws on arbitrary text (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (text) => void splitJsonDocuments(text)),
      { numRuns: 300 },
    );
  });
});

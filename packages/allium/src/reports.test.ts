import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkReports, referenceJson, writeReferenceJson } from './reports.js';

describe('referenceJson', () => {
  it('prints pretty JSON with every object’s keys sorted at every depth, as serde_json does', () => {
    const value = {
      spec_file: 'a.allium',
      command: 'check',
      diagnostics: [
        { severity: 'error', message: 'm', location: { line: 2, file: 'a.allium', col: 1 }, code: null },
        { severity: 'info', skipped: undefined, code: 'x', location: { line: 1, col: 3, file: 'a.allium' } },
      ],
      findings: [{ type: 't', nested: [{ z: 1, a: [2, { y: true, b: 'c' }] }] }],
    };
    expect(referenceJson(value)).toBe(
      [
        '{',
        '  "command": "check",',
        '  "diagnostics": [',
        '    {',
        '      "code": null,',
        '      "location": {',
        '        "col": 1,',
        '        "file": "a.allium",',
        '        "line": 2',
        '      },',
        '      "message": "m",',
        '      "severity": "error"',
        '    },',
        '    {',
        '      "code": "x",',
        '      "location": {',
        '        "col": 3,',
        '        "file": "a.allium",',
        '        "line": 1',
        '      },',
        '      "severity": "info"',
        '    }',
        '  ],',
        '  "findings": [',
        '    {',
        '      "nested": [',
        '        {',
        '          "a": [',
        '            2,',
        '            {',
        '              "b": "c",',
        '              "y": true',
        '            }',
        '          ],',
        '          "z": 1',
        '        }',
        '      ],',
        '      "type": "t"',
        '    }',
        '  ],',
        '  "spec_file": "a.allium"',
        '}',
      ].join('\n'),
    );
  });

  it('returns the same text whether or not the keys were already in order', () => {
    const sorted = { a: [1, { b: null, c: 'x' }], d: { e: true } };
    const shuffled = { d: { e: true }, a: [1, { c: 'x', b: null }] };
    expect(referenceJson(shuffled)).toBe(referenceJson(sorted));
    expect(referenceJson(sorted)).toBe(JSON.stringify(sorted, null, 2));
  });

  it('prints check and analyse reports with every key in order', () => {
    const text = [
      '-- allium: 3',
      'entity Order {',
      '  status: pending | shipped',
      '}',
      'rule Ship {',
      '  when: ShipIt(order)',
      '  ensures: order.status = shippd',
      '}',
      'entity Broken {',
      '  x: Missing',
      '',
    ].join('\n');
    for (const command of ['check', 'analyse'] as const) {
      const [report] = checkReports([{ path: 'a.allium', text }], command).reports;
      expect(report?.diagnostics.length).toBeGreaterThan(2);
      expect(referenceJson(report)).toBe(JSON.stringify(deepSorted(report), null, 2));
    }
  });
});

describe('writeReferenceJson', () => {
  const pieces = (value: unknown, size: number): string[] => {
    const out: string[] = [];
    writeReferenceJson(value, (piece) => out.push(piece), size);
    return out;
  };
  // Values JSON.stringify treats specially: undefined, functions and symbols (left out of objects, null in lists),
  // toJSON, non-finite numbers (null), empty lists and objects, keys that need escaping or sort oddly.
  const special = fc.constantFrom<unknown>(
    undefined,
    () => 1,
    Symbol('s'),
    Number.NaN,
    -0,
    new Date(0),
    { toJSON: (key: string) => `key ${key}` },
    [],
    {},
  );
  const tree = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: 'small' },
      fc.jsonValue({ maxDepth: 2 }),
      special,
      fc.array(tie('value'), { maxLength: 5 }),
      fc.dictionary(
        fc.oneof(fc.string({ maxLength: 4 }), fc.constantFrom('a', 'B', '__proto__', '"\n')),
        tie('value'),
        {
          maxKeys: 5,
        },
      ),
    ),
  })).value;

  it('writes what JSON.stringify(value, null, 2) writes with every key sorted, in pieces ending at line breaks', () => {
    fc.assert(
      fc.property(tree, fc.integer({ min: 1, max: 200 }), (value, size) => {
        fc.pre(value !== undefined && typeof value !== 'function' && typeof value !== 'symbol');
        fc.pre(!hasIndexKey(value));
        const written = pieces(value, size);
        expect(written.join('')).toBe(JSON.stringify(value, sortingKeys, 2));
        expect(written.slice(0, -1).every((piece) => piece.endsWith('\n'))).toBe(true);
        expect(written.every((piece) => piece.length > 0)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps each piece near the size asked for, and throws on a cycle or a value with no JSON text', () => {
    const diagnostics = Array.from({ length: 2_000 }, (_, i) => ({ message: `m${i}`, code: null }));
    const written = pieces({ diagnostics }, 4_096);
    const total = written.join('').length;
    // Pieces end at the first batch end past the size; a batch is about a sixteenth of one.
    expect(written.length).toBeGreaterThan(total / (2 * 4_096));
    expect(Math.max(...written.map((piece) => piece.length))).toBeLessThan(2 * 4_096);
    const cycle: Record<string, unknown> = { a: 1 };
    cycle['self'] = { back: cycle };
    expect(() => pieces(cycle, 10)).toThrow(TypeError);
    expect(() => pieces(undefined, 10)).toThrow(/no JSON text/);
  });

  it('sorts keys that look like list indexes as strings, as serde_json does ("10" before "9")', () => {
    expect(pieces({ 9: 'a', 10: 'b', x: 1 }, 100).join('')).toBe('{\n  "10": "b",\n  "9": "a",\n  "x": 1\n}');
    // In a list, deep inside an element too.
    expect(pieces([{ y: [{ 9: 'a', 10: 'b' }] }], 100).join('')).toBe(
      '[\n  {\n    "y": [\n      {\n        "10": "b",\n        "9": "a"\n      }\n    ]\n  }\n]',
    );
  });
});

/** Whether some object inside has a key it keeps in numeric order whatever the order of adding (no copy sorts it). */
function hasIndexKey(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  return (
    Object.keys(record).some((key) => /^(0|[1-9][0-9]*)$/.test(key) && !Array.isArray(record)) ||
    Object.values(record).some(hasIndexKey)
  );
}

/** A JSON.stringify replacer that copies every object with its keys sorted (after toJSON, which runs first). */
function sortingKeys(this: unknown, _key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(record)
      .sort()
      .map((key) => [key, record[key]]),
  );
}

function deepSorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepSorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => [k, deepSorted(v)]),
  );
}

import { describe, expect, it } from 'vitest';
import { checkReports, referenceJson } from './reports.js';

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

  it('prints check and analyse reports, whose diagnostics it does not re-sort, with every key in order', () => {
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

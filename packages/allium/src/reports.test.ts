import { describe, expect, it } from 'vitest';
import { referenceJson } from './reports.js';

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
});

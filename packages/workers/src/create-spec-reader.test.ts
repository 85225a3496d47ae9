import { describe, expect, it } from 'vitest';
import { createSpecReader } from './create-spec-reader.js';
import { TOOL_LIBRARY_SPEC } from './spec-fixtures.test-helpers.js';

const reader = createSpecReader();
const source = (text: string) => [{ path: 'spec/library.allium', text }];

describe('createSpecReader', () => {
  const reading = reader.read(source(TOOL_LIBRARY_SPEC));

  it('lists constructs, fields included', () => {
    expect([...reading.constructs.keys()]).toEqual(
      expect.arrayContaining([
        'entity:Member',
        'field:Tool.condition',
        'rule:Borrow',
        'rule:GiveBack',
        'surface:Desk',
        'enum:Condition',
      ]),
    );
  });

  it('reads open questions with their location', () => {
    expect(reading.openQuestions).toEqual([
      { text: 'May a worn tool be lent?', file: 'spec/library.allium', line: 52 },
    ]);
  });

  it('reports no syntax error for the fixture and one for broken text', () => {
    expect(reading.diagnostics.filter((d) => d.severity === 'error' && d.code === null)).toEqual([]);
    const broken = reader.read(source(TOOL_LIBRARY_SPEC.replace('rule GiveBack {', 'rule GiveBack {{ ((')));
    expect(broken.diagnostics.some((d) => d.severity === 'error' && d.code === null)).toBe(true);
  });

  it('diffs added, removed and changed constructs', () => {
    const after = reader.read(
      source(
        TOOL_LIBRARY_SPEC.replace('    condition: Condition\n', '').replace(
          'requires: tool.status = shelved',
          'requires: tool.status = out',
        ),
      ),
    );
    expect(reader.diff(reading, after)).toEqual({
      added: [],
      removed: ['field:Tool.condition'],
      changed: ['entity:Tool', 'rule:Borrow'],
    });
  });
});

import { describe, expect, it } from 'vitest';
import { countTestMarkers } from './count-test-markers.js';
import {
  detectViolations,
  isNamedByRequest,
  type FileSnapshot,
  type GuardInput,
  type WorkspaceSnapshot,
} from './detect-violations.js';
import { findSuppressions, newSuppressions } from './find-suppressions.js';
import { sha256 } from './take-snapshot.js';

const file = (text: string): FileSnapshot => ({ text, sha256: sha256(text) });
const snap = (spec: Record<string, string>, tests: Record<string, string>): WorkspaceSnapshot => ({
  spec: new Map(Object.entries(spec).map(([p, t]) => [p, file(t)])),
  tests: new Map(Object.entries(tests).map(([p, t]) => [p, file(t)])),
});

const TEST = "import { it, expect } from 'vitest';\nit('Borrow: marks out', () => { expect(1).toBe(1); });\n";
const SPEC = '-- allium: 3\nrule Borrow {\n    when: X()\n    ensures: Y()\n}\n';
const base = (overrides: Partial<GuardInput>): GuardInput => ({
  phase: 'implement',
  before: snap({ 'spec/a.allium': SPEC }, { 'test/a.test.ts': TEST }),
  after: snap({ 'spec/a.allium': SPEC }, { 'test/a.test.ts': TEST }),
  protectedTests: [
    {
      path: 'test/a.test.ts',
      sha256: sha256(TEST),
      storedCopy: 's/protected/test/a.test.ts',
      recordedAtTick: 1,
    },
  ],
  removedConstructs: [],
  ...overrides,
});

describe('countTestMarkers', () => {
  it.each([
    ["it.skip('a', () => {}); xit('b'); test.skipIf(x)('c')", { skip: 3, only: 0, todo: 0 }],
    ["describe.only('a'); fit('b', f); it.only('c')", { skip: 0, only: 3, todo: 0 }],
    ["test.todo('later'); it.todo('x')", { skip: 0, only: 0, todo: 2 }],
    ['@pytest.mark.skip(reason="x")\ndef test_a(): pass', { skip: 1, only: 0, todo: 0 }],
    [
      "it('skips nothing: it.skipper is not a marker', () => { expect(only).toBe(1) })",
      { skip: 0, only: 0, todo: 0 },
    ],
  ])('counts %j', (text, expected) => {
    expect(countTestMarkers(text)).toEqual(expected);
  });
});

describe('suppressions', () => {
  it('reads codes and ignores line shifts and edits elsewhere', () => {
    const before = '-- allium-ignore allium.field.unused\nentity A {}\n';
    expect(findSuppressions(before)[0]).toMatchObject({ line: 1, codes: ['allium.field.unused'] });
    expect(newSuppressions(before, `\n\n${before}entity B {}\n`)).toEqual([]);
  });

  it('finds a second copy of an existing suppression', () => {
    const before = '-- allium-ignore all\nentity A {}\n';
    expect(newSuppressions(before, `${before}-- allium-ignore all\nentity B {}\n`)).toMatchObject([
      { line: 3 },
    ]);
  });
});

describe('detectViolations', () => {
  it('finds nothing when nothing changed', () => {
    expect(detectViolations(base({}))).toEqual({ violations: [], reverts: [], allowed: [] });
  });

  it('restores an edited protected test from the engine copy', () => {
    const report = detectViolations(
      base({ after: snap({ 'spec/a.allium': SPEC }, { 'test/a.test.ts': `${TEST}// x\n` }) }),
    );
    expect(report.violations).toEqual([
      { kind: 'protected_test_changed', path: 'test/a.test.ts', deleted: false },
    ]);
    expect(report.reverts).toEqual([
      {
        kind: 'restore_from_store',
        path: 'test/a.test.ts',
        storedCopy: 's/protected/test/a.test.ts',
        sha256: sha256(TEST),
      },
    ]);
  });

  it('lets propagate rewrite the protected tests its result lists, and no other', () => {
    const after = snap({ 'spec/a.allium': SPEC }, { 'test/a.test.ts': `${TEST}// regenerated\n` });
    const listed = detectViolations(base({ phase: 'propagate', after, propagatedFiles: ['test/a.test.ts'] }));
    expect(listed.violations).toEqual([]);
    const unlisted = detectViolations(
      base({ phase: 'propagate', after, propagatedFiles: ['test/b.test.ts'] }),
    );
    expect(unlisted.violations).toEqual([
      { kind: 'protected_test_changed', path: 'test/a.test.ts', deleted: false },
    ]);
  });

  it('flags a deleted protected test', () => {
    const report = detectViolations(base({ after: snap({ 'spec/a.allium': SPEC }, {}) }));
    expect(report.violations).toEqual([
      { kind: 'protected_test_changed', path: 'test/a.test.ts', deleted: true },
    ]);
  });

  it('flags rising skip/only/todo in any test file; deletes a new file, restores an old one', () => {
    const report = detectViolations(
      base({
        protectedTests: [],
        before: snap({}, { 'test/a.test.ts': TEST }),
        after: snap(
          {},
          { 'test/a.test.ts': TEST.replace('it(', 'it.only('), 'test/b.test.ts': "it.todo('later')" },
        ),
      }),
    );
    expect(report.violations).toEqual([
      { kind: 'test_markers_rose', path: 'test/a.test.ts', marker: 'only', before: 0, after: 1 },
      { kind: 'test_markers_rose', path: 'test/b.test.ts', marker: 'todo', before: 0, after: 1 },
    ]);
    expect(report.reverts).toEqual([
      { kind: 'restore_text', path: 'test/a.test.ts', text: TEST },
      { kind: 'delete', path: 'test/b.test.ts' },
    ]);
  });

  it('does not flag a file whose markers went down', () => {
    const before = snap({}, { 'test/a.test.ts': "it.skip('x', f)" });
    const after = snap({}, { 'test/a.test.ts': "it('x', f)" });
    expect(detectViolations(base({ protectedTests: [], before, after })).violations).toEqual([]);
  });

  it('flags removed constructs unless a tend request names them, and restores changed spec files', () => {
    const after = snap({ 'spec/a.allium': '-- allium: 3\n' }, { 'test/a.test.ts': TEST });
    const removed = ['rule:Borrow', 'suppression:spec/a.allium:3', 'question:Why?'];
    const unnamed = { request: 'Clarify the GiveBack rule.' };
    const report = detectViolations(
      base({ phase: 'tend', after, removedConstructs: removed, tendRequest: unnamed }),
    );
    expect(report.violations).toEqual([{ kind: 'spec_construct_removed', construct: 'rule:Borrow' }]);
    expect(report.reverts).toEqual([{ kind: 'restore_text', path: 'spec/a.allium', text: SPEC }]);
    const allowed = { request: 'Remove the Borrow rule; lending moved elsewhere.' };
    const named = detectViolations(
      base({ phase: 'tend', after, removedConstructs: removed, tendRequest: allowed }),
    );
    expect(named.violations).toEqual([]);
    const distill = detectViolations(
      base({ phase: 'distill', after, removedConstructs: removed, tendRequest: allowed }),
    );
    expect(distill.violations).toEqual([{ kind: 'spec_construct_removed', construct: 'rule:Borrow' }]);
  });

  it('strips only the new suppression', () => {
    const changed = SPEC.replace(
      'rule Borrow {',
      '-- allium-ignore allium.rule.unreachableTrigger\nrule Borrow {',
    ).concat('-- note\n');
    const after = snap({ 'spec/a.allium': changed }, { 'test/a.test.ts': TEST });
    const report = detectViolations(base({ phase: 'tend', after }));
    expect(report.violations).toEqual([
      {
        kind: 'suppression_added',
        path: 'spec/a.allium',
        line: 2,
        codes: ['allium.rule.unreachableTrigger'],
      },
    ]);
    expect(report.reverts).toEqual([
      { kind: 'restore_text', path: 'spec/a.allium', text: `${SPEC}-- note\n` },
    ]);
  });

  it.each(['propagate', 'implement', 'weed'] as const)('%s may not touch the spec at all', (phase) => {
    const after = snap(
      { 'spec/a.allium': SPEC.replace('Y()', 'Z()'), 'spec/b.allium': '-- allium: 3\n' },
      { 'test/a.test.ts': TEST },
    );
    const report = detectViolations(base({ phase, after }));
    expect(report.violations).toEqual([
      { kind: 'spec_edited_out_of_phase', path: 'spec/a.allium' },
      { kind: 'spec_edited_out_of_phase', path: 'spec/b.allium' },
    ]);
    expect(report.reverts).toEqual([
      { kind: 'restore_text', path: 'spec/a.allium', text: SPEC },
      { kind: 'delete', path: 'spec/b.allium' },
    ]);
  });
});

describe('isNamedByRequest', () => {
  it.each([
    ['field:Tool.condition', { request: 'drop it', removals: ['field:Tool.condition'] }, true],
    ['field:Tool.condition', { request: 'Drop Tool.condition; unused.' }, true],
    ['rule:Borrow', { request: 'Rename BorrowLater' }, false],
    ['entity:Tool', { request: 'Drop Tool.condition' }, false],
    ['rule:Borrow', undefined, false],
  ] as const)('%s named by %j → %s', (id, request, expected) => {
    expect(isNamedByRequest(id, request)).toBe(expected);
  });
});

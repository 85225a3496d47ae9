import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  detectViolations,
  type FileSnapshot,
  type ProtectedTest,
  type RevertAction,
  type WorkspaceSnapshot,
} from './detect-violations.js';
import { testStrength } from './count-test-markers.js';
import { sha256 } from './take-snapshot.js';

const file = (text: string): FileSnapshot => ({ text, sha256: sha256(text) });
const testText = (i: number) =>
  `import { it, expect } from 'vitest';\nit('Rule${i}: works', () => { expect(${i}).toBe(${i}); });\n`;
const specText = (i: number) =>
  `-- allium: 3\nrule Rule${i} {\n    when: Go${i}()\n    ensures: Done${i}()\n}\n`;

const BEFORE: WorkspaceSnapshot = {
  spec: new Map([0, 1].map((i) => [`spec/s${i}.allium`, file(specText(i))])),
  tests: new Map([0, 1, 2, 3].map((i) => [`test/t${i}.test.ts`, file(testText(i))])),
};
const PROTECTED: ProtectedTest[] = [0, 1].map((i) => ({
  path: `test/t${i}.test.ts`,
  sha256: sha256(testText(i)),
  storedCopy: `run/protected/test/t${i}.test.ts`,
  recordedAtTick: 1,
}));
const STORE = new Map(PROTECTED.map((t) => [t.storedCopy, testText(Number(t.path.match(/\d/)![0]))]));

/** One thing an agent may do to the project; benign and cheating moves mixed. */
type Move =
  | { kind: 'append-test'; file: number; line: string }
  | { kind: 'new-test'; name: string; line: string }
  | { kind: 'edit-spec'; file: number; line: string }
  | { kind: 'delete-test'; file: number };

const lineArb = fc.constantFrom(
  "it('more', () => { expect(1).toBe(1); });",
  "it.skip('later', () => {});",
  "it.only('focus', () => {});",
  "it.todo('some day');",
  "xit('off', () => {});",
  '-- allium-ignore allium.rule.unreachableTrigger',
  '-- a harmless comment',
);
const moveArb: fc.Arbitrary<Move> = fc.oneof(
  fc.record({
    kind: fc.constant('append-test' as const),
    file: fc.integer({ min: 0, max: 3 }),
    line: lineArb,
  }),
  fc.record({ kind: fc.constant('new-test' as const), name: fc.constantFrom('a', 'b'), line: lineArb }),
  fc.record({ kind: fc.constant('edit-spec' as const), file: fc.integer({ min: 0, max: 1 }), line: lineArb }),
  fc.record({ kind: fc.constant('delete-test' as const), file: fc.integer({ min: 0, max: 3 }) }),
);

function play(moves: readonly Move[]): WorkspaceSnapshot {
  const spec = new Map(BEFORE.spec);
  const tests = new Map(BEFORE.tests);
  for (const move of moves) {
    if (move.kind === 'append-test') {
      const path = `test/t${move.file}.test.ts`;
      tests.set(path, file(`${tests.get(path)?.text ?? ''}${move.line}\n`));
    } else if (move.kind === 'new-test') {
      const path = `test/new-${move.name}.test.ts`;
      tests.set(path, file(`${tests.get(path)?.text ?? ''}${move.line}\n`));
    } else if (move.kind === 'edit-spec') {
      const path = `spec/s${move.file}.allium`;
      spec.set(path, file(spec.get(path)!.text.replace('rule ', `${move.line}\nrule `)));
    } else tests.delete(`test/t${move.file}.test.ts`);
  }
  return { spec, tests };
}

function revert(snapshot: WorkspaceSnapshot, actions: readonly RevertAction[]): WorkspaceSnapshot {
  const spec = new Map(snapshot.spec);
  const tests = new Map(snapshot.tests);
  for (const action of actions) {
    const target = action.path.endsWith('.allium') ? spec : tests;
    if (action.kind === 'delete') target.delete(action.path);
    else
      target.set(
        action.path,
        file(action.kind === 'restore_text' ? action.text : STORE.get(action.storedCopy)!),
      );
  }
  return { spec, tests };
}

describe('anti-cheat guards (property)', () => {
  it('after the reverts are applied, the guards find nothing left to flag', () => {
    fc.assert(
      fc.property(
        fc.array(moveArb, { maxLength: 8 }),
        fc.constantFrom('implement', 'weed', 'tend'),
        (moves, phase) => {
          const after = play(moves);
          const report = detectViolations({
            phase,
            before: BEFORE,
            after,
            protectedTests: PROTECTED,
            removedConstructs: [],
          });
          const reverted = revert(after, report.reverts);
          const again = detectViolations({
            phase,
            before: BEFORE,
            after: reverted,
            protectedTests: PROTECTED,
            removedConstructs: [],
          });
          expect(again.violations).toEqual([]);
          expect(new Set(report.reverts.map((r) => r.path)).size).toBe(report.reverts.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('flags a run exactly when its end state holds a cheat', () => {
    fc.assert(
      fc.property(fc.array(moveArb, { maxLength: 8 }), (moves) => {
        const after = play(moves);
        const report = detectViolations({
          phase: 'implement',
          before: BEFORE,
          after,
          protectedTests: PROTECTED,
          removedConstructs: [],
        });
        // An oracle over the end state alone: the fixture's original files hold no marker, a test file may not
        // end with fewer tests or assertions than it started with, and implement may not change the spec at all.
        const cheats =
          PROTECTED.some((t) => after.tests.get(t.path)?.sha256 !== t.sha256) ||
          [...BEFORE.tests.keys()].some((path) => !after.tests.has(path)) ||
          [...after.tests.values()].some((f) => /\.(skip|only|todo)\(|\bxit\(/.test(f.text)) ||
          [...BEFORE.tests].some(([path, f]) => {
            const now = after.tests.get(path);
            if (now === undefined) return false;
            const [was, is] = [testStrength(f.text), testStrength(now.text)];
            return is.cases < was.cases || is.assertions < was.assertions;
          }) ||
          [...after.spec].some(([path, f]) => BEFORE.spec.get(path)?.sha256 !== f.sha256);
        expect(report.violations.length > 0).toBe(cheats);
      }),
      { numRuns: 300 },
    );
  });
});

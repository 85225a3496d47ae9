import { countTestMarkers, type TestMarkerCounts } from './count-test-markers.js';
import { findSuppressions, newSuppressions, type SpecSuppression } from './find-suppressions.js';
import type { TendRequest } from './phase-context.js';
import type { WorkerPhase } from './worker-phase.js';

/** One file's content at a moment, with its SHA-256 (hex). */
export interface FileSnapshot {
  readonly text: string;
  readonly sha256: string;
}

/** Spec and test files of the project at a moment, keyed by path relative to the project root. */
export interface WorkspaceSnapshot {
  readonly spec: ReadonlyMap<string, FileSnapshot>;
  readonly tests: ReadonlyMap<string, FileSnapshot>;
}

/** A generated test the engine protects: its hash when propagate finished, and where the engine keeps a copy. */
export interface ProtectedTest {
  readonly path: string;
  readonly sha256: string;
  /** The engine's copy, relative to `.allium-loop/` (`<slug>/protected/<path>.orig`), as the ledger records it. */
  readonly storedCopy: string;
  readonly recordedAtTick: number;
}

/** A cheat the guards caught. Each is journaled and fails the attempt. */
export type GuardViolation =
  | { readonly kind: 'protected_test_changed'; readonly path: string; readonly deleted: boolean }
  | { readonly kind: 'test_file_deleted'; readonly path: string }
  | { readonly kind: 'spec_edited_out_of_phase'; readonly path: string }
  | {
      readonly kind: 'test_markers_rose';
      readonly path: string;
      readonly marker: keyof TestMarkerCounts;
      readonly before: number;
      readonly after: number;
    }
  | { readonly kind: 'spec_construct_removed'; readonly construct: string }
  | {
      readonly kind: 'suppression_added';
      readonly path: string;
      readonly line: number;
      readonly codes: readonly string[];
    };

/** How to undo a violation. `path` is relative to the project root, `storedCopy` to `.allium-loop/`. */
export type RevertAction =
  | {
      readonly kind: 'restore_from_store';
      readonly path: string;
      readonly storedCopy: string;
      readonly sha256: string;
    }
  | { readonly kind: 'restore_text'; readonly path: string; readonly text: string }
  | { readonly kind: 'delete'; readonly path: string };

/** What the guards found and how to undo it; at most one revert per path. */
export interface GuardReport {
  readonly violations: readonly GuardViolation[];
  readonly reverts: readonly RevertAction[];
}

/** Everything the guards compare. */
export interface GuardInput {
  readonly phase: WorkerPhase;
  readonly before: WorkspaceSnapshot;
  readonly after: WorkspaceSnapshot;
  readonly protectedTests: readonly ProtectedTest[];
  /** Construct ids the engine's spec diff says disappeared during the phase. */
  readonly removedConstructs: readonly string[];
  readonly tendRequest?: TendRequest;
  /**
   * propagate only: the test files its result lists. Propagate may rewrite those protected tests (regenerating
   * after a tend), but no other; without a valid result it may rewrite none.
   */
  readonly propagatedFiles?: readonly string[];
}

/** Construct kinds whose removal needs a tend request; suppressions, questions and the like may go freely. */
const GUARDED_KINDS = new Set([
  'rule',
  'entity',
  'field',
  'surface',
  'value',
  'enum',
  'variant',
  'actor',
  'contract',
  'invariant',
]);

/** Whether a tend request names a construct, by id (`field:Tool.condition`) or by its name (`Tool.condition`). */
export function isNamedByRequest(construct: string, request: TendRequest | undefined): boolean {
  if (request === undefined) return false;
  const name = construct.slice(construct.indexOf(':') + 1);
  const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const named = (text: string, what: string) =>
    new RegExp(`(?<![\\w.:])${escaped(what)}(?![\\w]|\\.\\w)`).test(text);
  const listed = (request.removals ?? []).some((r) => r === construct || r === name);
  return listed || named(request.request, construct) || named(request.request, name);
}

function protectedViolations(input: GuardInput): { violations: GuardViolation[]; reverts: RevertAction[] } {
  const violations: GuardViolation[] = [];
  const reverts: RevertAction[] = [];
  const regenerated = new Set(input.phase === 'propagate' ? (input.propagatedFiles ?? []) : []);
  for (const test of input.protectedTests) {
    if (regenerated.has(test.path)) continue;
    const now = input.after.tests.get(test.path);
    if (now?.sha256 === test.sha256) continue;
    violations.push({ kind: 'protected_test_changed', path: test.path, deleted: now === undefined });
    reverts.push({
      kind: 'restore_from_store',
      path: test.path,
      storedCopy: test.storedCopy,
      sha256: test.sha256,
    });
  }
  return { violations, reverts };
}

function markerViolations(input: GuardInput): { violations: GuardViolation[]; reverts: RevertAction[] } {
  const violations: GuardViolation[] = [];
  const reverts: RevertAction[] = [];
  for (const [path, file] of input.after.tests) {
    const previous = input.before.tests.get(path);
    if (previous?.sha256 === file.sha256) continue;
    const before = previous === undefined ? { skip: 0, only: 0, todo: 0 } : countTestMarkers(previous.text);
    const after = countTestMarkers(file.text);
    const rose = (['skip', 'only', 'todo'] as const).filter((m) => after[m] > before[m]);
    for (const marker of rose) {
      violations.push({
        kind: 'test_markers_rose',
        path,
        marker,
        before: before[marker],
        after: after[marker],
      });
    }
    if (rose.length > 0) {
      reverts.push(
        previous === undefined
          ? { kind: 'delete', path }
          : { kind: 'restore_text', path, text: previous.text },
      );
    }
  }
  return { violations, reverts };
}

function deletionViolations(input: GuardInput): { violations: GuardViolation[]; reverts: RevertAction[] } {
  const violations: GuardViolation[] = [];
  const reverts: RevertAction[] = [];
  if (input.phase === 'propagate') return { violations, reverts };
  const guarded = new Set(input.protectedTests.map((t) => t.path));
  for (const [path, file] of input.before.tests) {
    if (input.after.tests.has(path) || guarded.has(path)) continue;
    violations.push({ kind: 'test_file_deleted', path });
    reverts.push({ kind: 'restore_text', path, text: file.text });
  }
  return { violations, reverts };
}

/** Phases whose prompt forbids touching the spec; only elicit, distill and tend write it. */
const SPEC_READ_ONLY: ReadonlySet<WorkerPhase> = new Set(['propagate', 'implement', 'weed']);

function specEditViolations(input: GuardInput): { violations: GuardViolation[]; reverts: RevertAction[] } {
  const violations: GuardViolation[] = [];
  const reverts: RevertAction[] = [];
  if (!SPEC_READ_ONLY.has(input.phase)) return { violations, reverts };
  const paths = new Set([...input.before.spec.keys(), ...input.after.spec.keys()]);
  for (const path of [...paths].sort()) {
    const before = input.before.spec.get(path);
    if (before?.sha256 === input.after.spec.get(path)?.sha256) continue;
    violations.push({ kind: 'spec_edited_out_of_phase', path });
    reverts.push(
      before === undefined ? { kind: 'delete', path } : { kind: 'restore_text', path, text: before.text },
    );
  }
  return { violations, reverts };
}

function changedSpecFiles(input: GuardInput): RevertAction[] {
  return [...input.before.spec]
    .filter(([path, file]) => input.after.spec.get(path)?.sha256 !== file.sha256)
    .map(([path, file]) => ({ kind: 'restore_text', path, text: file.text }));
}

function removalViolations(input: GuardInput): { violations: GuardViolation[]; reverts: RevertAction[] } {
  const allowed = input.phase === 'tend' ? input.tendRequest : undefined;
  const violations: GuardViolation[] = input.removedConstructs
    .filter((id) => GUARDED_KINDS.has(id.slice(0, id.indexOf(':'))) && !isNamedByRequest(id, allowed))
    .map((construct) => ({ kind: 'spec_construct_removed', construct }));
  return { violations, reverts: violations.length > 0 ? changedSpecFiles(input) : [] };
}

function stripSuppressions(text: string, added: readonly SpecSuppression[]): string {
  const drop = new Set(added.map((s) => s.line));
  return text
    .split('\n')
    .flatMap((line, index) => {
      if (!drop.has(index + 1)) return [line];
      const kept = line.replace(/\s*--\s*allium-ignore\b.*$/, '');
      return kept.trim() === '' ? [] : [kept];
    })
    .join('\n');
}

function suppressionViolations(input: GuardInput): { violations: GuardViolation[]; reverts: RevertAction[] } {
  const violations: GuardViolation[] = [];
  const reverts: RevertAction[] = [];
  for (const [path, file] of input.after.spec) {
    const previous = input.before.spec.get(path);
    if (previous?.sha256 === file.sha256) continue;
    const added =
      previous === undefined ? findSuppressions(file.text) : newSuppressions(previous.text, file.text);
    if (added.length === 0) continue;
    added.forEach((s) => violations.push({ kind: 'suppression_added', path, line: s.line, codes: s.codes }));
    reverts.push({ kind: 'restore_text', path, text: stripSuppressions(file.text, added) });
  }
  return { violations, reverts };
}

/**
 * Compares the project before and after a phase and reports every cheat: a protected (generated) test changed
 * or deleted, except by a propagate whose result lists it; any other test file deleted by any phase but propagate; any spec file
 * created, changed or deleted by propagate, implement or weed (only elicit, distill and tend write the spec); more `.skip`/`.only`/`.todo` markers in a test file; a rule, entity,
 * field, surface (or other named construct) removed from the spec without a tend request naming it; a new
 * `-- allium-ignore`. Pure. Each violation comes with the action that undoes it: protected tests are restored
 * from the engine's copy, other test files and spec files from the before snapshot, new suppressions are
 * stripped. When two actions target one file, the first wins (protected copy, then whole-file restores).
 */
export function detectViolations(input: GuardInput): GuardReport {
  const parts = [
    protectedViolations(input),
    deletionViolations(input),
    markerViolations(input),
    specEditViolations(input),
    removalViolations(input),
    suppressionViolations(input),
  ];
  const reverts = new Map<string, RevertAction>();
  for (const action of parts.flatMap((p) => p.reverts))
    if (!reverts.has(action.path)) reverts.set(action.path, action);
  return { violations: parts.flatMap((p) => p.violations), reverts: [...reverts.values()] };
}

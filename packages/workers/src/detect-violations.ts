import type { HarnessEntry } from '@allium-loop/verify';
import {
  countSuppressions,
  countTestMarkers,
  hasSuppression,
  testStrength,
  type TestMarkerCounts,
} from './count-test-markers.js';
import { findSuppressions, newSuppressions, type SpecSuppression } from './find-suppressions.js';
import type { TendRequest } from './phase-context.js';
import type { WorkerPhase } from './worker-phase.js';

/** One file's content at a moment, with its SHA-256 (hex). */
export interface FileSnapshot {
  readonly text: string;
  readonly sha256: string;
}

/** Spec, test and code files of the project at a moment, keyed by path relative to the project root. */
export interface WorkspaceSnapshot {
  readonly spec: ReadonlyMap<string, FileSnapshot>;
  readonly tests: ReadonlyMap<string, FileSnapshot>;
  /** Other source files (not tests), read for lint/type/coverage suppressions; absent in older snapshots. */
  readonly code?: ReadonlyMap<string, FileSnapshot>;
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
    }
  | {
      readonly kind: 'test_weakened';
      readonly path: string;
      readonly measure: 'assertions' | 'cases';
      readonly before: number;
      readonly after: number;
    }
  | {
      readonly kind: 'lint_suppression_added';
      readonly path: string;
      readonly before: number;
      readonly after: number;
    }
  | { readonly kind: 'harness_changed'; readonly path: string; readonly label: string; readonly why: string };

/** The harness entries that changed during a phase (see `checkHarness` of `@allium-loop/verify`) and their restore. */
export interface HarnessChange {
  readonly changed: readonly HarnessEntry[];
  /** Per file, the text to write back (`null`: delete it). */
  readonly restore: readonly { readonly path: string; readonly text: string | null }[];
}

/** A weakening the user allowed through `allowTestChanges`: not a violation, but journaled. */
export interface AllowedTestChange {
  readonly path: string;
  readonly detail: string;
}

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
  /** Weakenings of tests the user allowed (`allowTestChanges`), to be journaled. */
  readonly allowed: readonly AllowedTestChange[];
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
  /** What changed in the harness (test command, its scripts and configs) since the run recorded it. */
  readonly harness?: HarnessChange;
  /** Test paths or globs (`*`, `**`) whose weakening the user allows; each allowed change is reported. */
  readonly allowedTestChanges?: readonly string[];
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

type GuardPart = { violations: GuardViolation[]; reverts: RevertAction[]; allowed?: AllowedTestChange[] };

function globPattern(glob: string): RegExp {
  const body = glob
    .replace(/^\.\//, '')
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*\/?/g, '\u0000')
    .replace(/\*/g, '[^/]*')
    .replace(/\?/g, '[^/]')
    .replace(/\u0000/g, '.*');
  return new RegExp(`^${body}$`);
}

/** Whether `path` is named by one of the user's `allowTestChanges` entries (a path, or a glob with `*`/`**`). */
export function isAllowedTestChange(path: string, allowed: readonly string[] | undefined): boolean {
  return (allowed ?? []).some((entry) => globPattern(entry).test(path));
}

function restoreBefore(path: string, previous: FileSnapshot | undefined): RevertAction {
  return previous === undefined
    ? { kind: 'delete', path }
    : { kind: 'restore_text', path, text: previous.text };
}

/**
 * Routes weakenings of one test file: violations (undone by restoring the file as it was before the phase) or,
 * when the user allowed changes to it, allowed changes.
 */
function weakening(
  input: GuardInput,
  path: string,
  found: GuardViolation[],
  previous: FileSnapshot | undefined,
): GuardPart {
  if (found.length === 0) return { violations: [], reverts: [] };
  if (isAllowedTestChange(path, input.allowedTestChanges)) {
    return {
      violations: [],
      reverts: [],
      allowed: found.map((v) => ({ path, detail: describeWeakening(v) })),
    };
  }
  return { violations: found, reverts: [restoreBefore(path, previous)] };
}

function describeWeakening(violation: GuardViolation): string {
  switch (violation.kind) {
    case 'test_markers_rose':
      return `${violation.marker} markers rose from ${String(violation.before)} to ${String(violation.after)}`;
    case 'test_weakened':
      return `${violation.measure} fell from ${String(violation.before)} to ${String(violation.after)}`;
    case 'lint_suppression_added':
      return `suppressions rose from ${String(violation.before)} to ${String(violation.after)}`;
    case 'test_file_deleted':
      return 'deleted';
    default:
      return violation.kind;
  }
}

function markerViolations(input: GuardInput): GuardPart {
  const parts: GuardPart[] = [];
  const guarded = new Set(input.protectedTests.map((t) => t.path));
  for (const [path, file] of input.after.tests) {
    const previous = input.before.tests.get(path);
    if (previous?.sha256 === file.sha256) continue;
    const found: GuardViolation[] = [];
    const before = previous === undefined ? { skip: 0, only: 0, todo: 0 } : countTestMarkers(previous.text);
    const after = countTestMarkers(file.text);
    for (const marker of ['skip', 'only', 'todo'] as const) {
      if (after[marker] > before[marker])
        found.push({ kind: 'test_markers_rose', path, marker, before: before[marker], after: after[marker] });
    }
    // A generated test has its own, stricter guard; a new file has nothing to weaken.
    if (previous !== undefined && !guarded.has(path)) {
      const was = testStrength(previous.text);
      const now = testStrength(file.text);
      for (const measure of ['cases', 'assertions'] as const) {
        if (now[measure] < was[measure])
          found.push({ kind: 'test_weakened', path, measure, before: was[measure], after: now[measure] });
      }
    }
    const suppressions = {
      before: previous === undefined ? 0 : countSuppressions(previous.text),
      after: countSuppressions(file.text),
    };
    if (suppressions.after > suppressions.before)
      found.push({ kind: 'lint_suppression_added', path, ...suppressions });
    parts.push(weakening(input, path, found, previous));
  }
  return mergeParts(parts);
}

function stripNewSuppressions(before: string, after: string): string {
  const seen = new Map<string, number>();
  for (const line of before.split('\n')) {
    if (hasSuppression(line)) seen.set(line.trim(), (seen.get(line.trim()) ?? 0) + 1);
  }
  return after
    .split('\n')
    .flatMap((line) => {
      if (!hasSuppression(line)) return [line];
      const left = seen.get(line.trim()) ?? 0;
      if (left > 0) {
        seen.set(line.trim(), left - 1);
        return [line];
      }
      if (/^\s*(?:\/\/|\/\*|\*|#|<!--)/.test(line)) return [];
      const cut = line.search(/\s*(?:\/\/|\/\*|#)[^'"`]*$/);
      return cut > 0 ? [line.slice(0, cut)] : [line];
    })
    .join('\n');
}

function codeSuppressionViolations(input: GuardInput): GuardPart {
  const violations: GuardViolation[] = [];
  const reverts: RevertAction[] = [];
  for (const [path, file] of input.after.code ?? new Map<string, FileSnapshot>()) {
    const previous = input.before.code?.get(path);
    if (previous?.sha256 === file.sha256) continue;
    const before = previous === undefined ? 0 : countSuppressions(previous.text);
    const after = countSuppressions(file.text);
    if (after <= before) continue;
    violations.push({ kind: 'lint_suppression_added', path, before, after });
    reverts.push({ kind: 'restore_text', path, text: stripNewSuppressions(previous?.text ?? '', file.text) });
  }
  return { violations, reverts };
}

function harnessViolations(input: GuardInput): GuardPart {
  const change = input.harness;
  if (change === undefined) return { violations: [], reverts: [] };
  return {
    violations: change.changed.map((entry) => ({
      kind: 'harness_changed',
      path: entry.path,
      label: entry.label,
      why: entry.why,
    })),
    reverts: change.restore.map((r) =>
      r.text === null
        ? { kind: 'delete', path: r.path }
        : { kind: 'restore_text', path: r.path, text: r.text },
    ),
  };
}

function mergeParts(parts: readonly GuardPart[]): GuardPart {
  return {
    violations: parts.flatMap((p) => p.violations),
    reverts: parts.flatMap((p) => p.reverts),
    allowed: parts.flatMap((p) => p.allowed ?? []),
  };
}

function deletionViolations(input: GuardInput): GuardPart {
  const parts: GuardPart[] = [];
  const guarded = new Set(input.protectedTests.map((t) => t.path));
  for (const [path, file] of input.before.tests) {
    if (input.after.tests.has(path) || guarded.has(path)) continue;
    parts.push(weakening(input, path, [{ kind: 'test_file_deleted', path }], file));
  }
  return mergeParts(parts);
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
 * Compares the project before and after a phase and reports every cheat: the harness (test command, its scripts,
 * configs and build files) changed since the run recorded it; a protected (generated) test changed or deleted,
 * except by a propagate whose result lists it; any other test file deleted; a test file weakened (more
 * `.skip`/`.only`/`.todo`/`{ todo: true }` markers, fewer test declarations, fewer non-trivial assertions, more
 * lint/type/coverage suppressions), unless the user allowed changes to it (`allowedTestChanges`, reported as
 * `allowed`); a new lint/type/coverage suppression in any other source file; any spec file created, changed or
 * deleted by propagate, implement or weed (only elicit, distill and tend write the spec); a rule, entity, field,
 * surface (or other named construct) removed from the spec without a tend request naming it; a new
 * `-- allium-ignore`. Pure. Each violation comes with the action that undoes it: harness files are restored to
 * their recorded state, protected tests from the engine's copy, other test files and spec files from the before
 * snapshot; new suppressions are stripped. When two actions target one file, the first wins (harness, protected
 * copy, then whole-file restores).
 */
export function detectViolations(input: GuardInput): GuardReport {
  const parts: GuardPart[] = [
    harnessViolations(input),
    protectedViolations(input),
    deletionViolations(input),
    markerViolations(input),
    codeSuppressionViolations(input),
    specEditViolations(input),
    removalViolations(input),
    suppressionViolations(input),
  ];
  const reverts = new Map<string, RevertAction>();
  for (const action of parts.flatMap((p) => p.reverts))
    if (!reverts.has(action.path)) reverts.set(action.path, action);
  return {
    violations: parts.flatMap((p) => p.violations),
    reverts: [...reverts.values()],
    allowed: parts.flatMap((p) => p.allowed ?? []),
  };
}

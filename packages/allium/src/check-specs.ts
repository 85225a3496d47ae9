import { compareStrings } from './walk.js';
import type { ParsedSpec, Suppression } from './ast.js';
import {
  checkDeferredAndQuestions,
  checkUnreachableTriggers,
  checkUnused,
  checkSetOf,
  checkUsePaths,
  type UseLocator,
} from './check-declarations.js';
import { checkLifecycle } from './check-lifecycle.js';
import { checkCreatedTypes, checkTypeReferences } from './check-references.js';
import { checkExternalSourceHints, checkSurfaceBindings, checkUnusedFields } from './check-usage.js';
import {
  checkAmbiguousNames,
  checkConfigReferences,
  checkDefaultSchemas,
  checkDiscriminators,
  checkImportedAliases,
  checkListLiterals,
  checkRelatedSurfaces,
} from './check-types.js';
import { checkDuplicateLets, checkInvalidTriggers, checkUndefinedBindings } from './check-rules.js';
import { type Diagnostic, isOverMemberAccess } from './diagnostic.js';
import {
  type CheckSetContext,
  contributionsTo,
  importersOf,
  NO_IMPORTS,
  resolveImports,
  usedByImporters,
} from './imports.js';
import { indexSpec, type SpecIndex } from './spec-index.js';

/** The diagnostics of one file of a check set, in the reference order, and what its check set gives it. */
export interface FileDiagnostics {
  readonly file: string;
  readonly diagnostics: readonly Diagnostic[];
  /** The files it imports and its importers' contributions (which `analyse`'s findings read too). */
  readonly context: CheckSetContext;
}

/**
 * Every diagnostic of a check set: each file's parse diagnostics plus the structural checks, with
 * `-- allium-ignore` suppressions applied, sorted by file, line and column.
 */
export function checkSpecs(specs: readonly ParsedSpec[]): Diagnostic[] {
  return sortDiagnostics(checkIndexedSpecs(specs.map(indexSpec)).flatMap((file) => file.diagnostics));
}

/**
 * Per file, in input order, what the reference `check` prints: the parse diagnostics as the parser found them,
 * then the checks' diagnostics (suppressions applied) sorted by position, code and message. `keys` say which file each
 * is, for `use` paths to resolve against (see {@link checkSetOf}; default, their names); `locate`, where a `use` path
 * leads when the caller can ask the file system ({@link UseLocator}). `otherNamings` are a file's other names (each
 * an index of the same parse under that name, to the file's own index) whose `use` paths count for the files they
 * import (their uses, contributions), as the reference counts every name's, with no report of their own.
 */
export function checkIndexedSpecs(
  indexes: readonly SpecIndex[],
  keys?: readonly string[],
  locate?: UseLocator,
  otherNamings: ReadonlyMap<SpecIndex, SpecIndex> = new Map(),
): FileDiagnostics[] {
  const checkSet = checkSetOf(indexes, keys, locate);
  const importers = otherNamings.size === 0 ? indexes : indexes.concat([...otherNamings.keys()]);
  const imports = new Map(importers.map((index) => [index, resolveImports(index, checkSet)]));
  const importedBy = importersOf(imports);
  return indexes.map((index) => {
    const own = imports.get(index) ?? NO_IMPORTS;
    const mine = importedBy.get(index) ?? [];
    const contributions = contributionsTo(index, mine);
    const usedElsewhere = usedByImporters(
      index,
      mine.filter(({ importer }) => otherNamings.get(importer) !== index),
    );
    const checks = applySuppressions(
      checkTypeReferences(index).concat(
        checkCreatedTypes(index),
        checkInvalidTriggers(index),
        checkUndefinedBindings(index),
        checkDuplicateLets(index),
        checkLifecycle(index, contributions),
        checkUnused(index, usedElsewhere),
        checkUsePaths(index, checkSet),
        checkDeferredAndQuestions(index),
        checkUnreachableTriggers(index, own, contributions.providedTriggers),
        checkUnusedFields(index, contributions.referencedFields),
        checkExternalSourceHints(index),
        checkSurfaceBindings(index),
        checkDiscriminators(index),
        checkConfigReferences(index),
        checkImportedAliases(index, own),
        checkAmbiguousNames(index, own),
        checkRelatedSurfaces(index),
        checkListLiterals(index),
        checkDefaultSchemas(index, own),
      ),
      index.spec.suppressions,
    );
    return {
      file: index.spec.file,
      diagnostics: index.spec.diagnostics.concat(inReferenceOrder(checks)),
      context: { imports: own, contributions },
    };
  });
}

/**
 * `diagnostics` sorted by line, column, {@link spanRank}, code and message, ties in their given order. A big spec
 * has thousands: they are placed by line with a counting sort (one slot count per line, no comparison, no number
 * that is not a small integer, so cold code allocates nothing per diagnostic), and only the diagnostics of one line
 * are then compared in full. Lines far more numerous than the diagnostics (or not whole numbers) are left to a
 * comparison sort of the whole list.
 */
export function inReferenceOrder(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const count = diagnostics.length;
  let largest = 0;
  for (let i = 0; i < count; i += 1) {
    const line = (diagnostics[i] as Diagnostic).location.line;
    if (!Number.isInteger(line) || line < 0) return [...diagnostics].sort(compareInFull);
    if (line > largest) largest = line;
  }
  if (largest > 8 * count + 65_536) return [...diagnostics].sort(compareInFull);
  // next[line] is where the next diagnostic of that line goes once the counts are summed.
  const next = new Int32Array(largest + 2);
  for (let i = 0; i < count; i += 1) {
    const slot = (diagnostics[i] as Diagnostic).location.line + 1;
    next[slot] = (next[slot] as number) + 1;
  }
  for (let line = 1; line < next.length; line += 1)
    next[line] = (next[line] as number) + (next[line - 1] as number);
  const sorted = new Array<Diagnostic>(count);
  for (let i = 0; i < count; i += 1) {
    const diagnostic = diagnostics[i] as Diagnostic;
    const line = diagnostic.location.line;
    const at = next[line] as number;
    sorted[at] = diagnostic;
    next[line] = at + 1;
  }
  for (let from = 0; from < count;) {
    const line = (sorted[from] as Diagnostic).location.line;
    let to = from + 1;
    while (to < count && (sorted[to] as Diagnostic).location.line === line) to += 1;
    if (to - from > 1) sortRun(sorted, from, to);
    from = to;
  }
  return sorted;
}

/** Sorts `list[from..to)` in place by {@link compareInFull}, stably: by insertion when short, else by `sort`. */
function sortRun(list: Diagnostic[], from: number, to: number): void {
  if (to - from > 16) {
    const run = list.slice(from, to).sort(compareInFull);
    for (let k = 0; k < run.length; k += 1) list[from + k] = run[k] as Diagnostic;
    return;
  }
  for (let i = from + 1; i < to; i += 1) {
    const item = list[i] as Diagnostic;
    let j = i;
    while (j > from && compareInFull(list[j - 1] as Diagnostic, item) > 0) {
      list[j] = list[j - 1] as Diagnostic;
      j -= 1;
    }
    list[j] = item;
  }
}

function compareInFull(a: Diagnostic, b: Diagnostic): number {
  return (
    a.location.line - b.location.line ||
    a.location.col - b.location.col ||
    spanRank(a) - spanRank(b) ||
    compareStrings(a.code ?? '', b.code ?? '') ||
    compareStrings(a.message, b.message)
  );
}

/**
 * The reference orders diagnostics at one position by where their spans end, then by code. Ours carry no span end;
 * the only ones that share a start with another and end later are those reported over a member access `X.Y` at `X`
 * (marked with `overMemberAccess`), and, longer still, these two, reported over a field's whole `A | B` value (which
 * starts with the name another diagnostic may be reported at).
 */
const WHOLE_VALUE_CODES = new Set(['allium.sum.v1InlineEnum', 'allium.sum.invalidDiscriminator']);
const spanRank = (d: Diagnostic): number =>
  WHOLE_VALUE_CODES.has(d.code ?? '') ? 2 : isOverMemberAccess(d) ? 1 : 0;

/** Drops diagnostics silenced by an `-- allium-ignore` on their line or the line above (`all` silences any). */
export function applySuppressions(
  diagnostics: readonly Diagnostic[],
  suppressions: readonly Suppression[],
): Diagnostic[] {
  if (suppressions.length === 0) return diagnostics.slice();
  const byLine = new Map<number, ReadonlySet<string>>();
  for (const suppression of suppressions) byLine.set(suppression.location.line, new Set(suppression.codes));
  return diagnostics.filter((diagnostic) => {
    const line = diagnostic.location.line;
    const codes = byLine.get(line) ?? byLine.get(line - 1);
    if (codes === undefined) return true;
    return !(codes.has('all') || (diagnostic.code !== null && codes.has(diagnostic.code)));
  });
}

/** Sorts by file, then line, then column (stable for equal positions). */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort(
    (a, b) =>
      compareStrings(a.location.file, b.location.file) ||
      a.location.line - b.location.line ||
      a.location.col - b.location.col,
  );
}

/** `file:line:col severity code message` — the human line of `allium-loop spec check` (`-` for a null code). */
export function formatDiagnostic(diagnostic: Diagnostic): string {
  const { file, line, col } = diagnostic.location;
  return `${file}:${line}:${col} ${diagnostic.severity} ${diagnostic.code ?? '-'} ${diagnostic.message}`;
}

import { compareStrings } from './walk.js';
import type { ParsedSpec, Suppression } from './ast.js';
import {
  checkDeferredAndQuestions,
  checkUnreachableTriggers,
  checkUnused,
  checkSetOf,
  checkUsePaths,
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
import type { Diagnostic } from './diagnostic.js';
import { contributionsTo, importerUses, NO_IMPORTS, resolveImports } from './imports.js';
import { indexSpec, type SpecIndex } from './spec-index.js';

/** The diagnostics of one file of a check set, in the reference order. */
export interface FileDiagnostics {
  readonly file: string;
  readonly diagnostics: readonly Diagnostic[];
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
 * then the checks' diagnostics (suppressions applied) sorted by position, code and message.
 */
export function checkIndexedSpecs(indexes: readonly SpecIndex[]): FileDiagnostics[] {
  const checkSet = checkSetOf(indexes.map((index) => index.spec.file));
  const imports = new Map(indexes.map((index) => [index, resolveImports(index, indexes, checkSet)]));
  return indexes.map((index) => {
    const own = imports.get(index) ?? NO_IMPORTS;
    const contributions = contributionsTo(index, imports);
    const usedElsewhere = (name: string): boolean =>
      indexes.some((importer) => importerUses(importer, imports.get(importer) ?? NO_IMPORTS, index, name));
    const checks = applySuppressions(
      checkTypeReferences(index).concat(
        checkCreatedTypes(index),
        checkInvalidTriggers(index),
        checkUndefinedBindings(index),
        checkDuplicateLets(index),
        checkLifecycle(index, contributions.createdStatuses),
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
    return { file: index.spec.file, diagnostics: index.spec.diagnostics.concat(inReferenceOrder(checks)) };
  });
}

/**
 * `diagnostics` sorted by line, column, {@link spansWhole}, code and message, ties in their given order. A big spec
 * has thousands, so each gets a number that orders line and column (`line · 2²¹ + column`, a column past 2²¹ capped
 * there), and these numbers, each with the diagnostic's index in its low digits, are sorted by the typed array's own
 * numeric sort, no comparison function called; only runs with equal numbers are then compared in full. When the
 * numbers with their indexes would not be exact (a spec of millions of lines), a comparison sort does it all.
 */
export function inReferenceOrder(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  const count = diagnostics.length;
  const packed = new Float64Array(count);
  let largest = 0;
  for (let i = 0; i < count; i += 1) {
    const { line, col } = (diagnostics[i] as Diagnostic).location;
    packed[i] = line * COLUMNS + Math.min(col, COLUMNS - 1);
    largest = Math.max(largest, packed[i] as number);
  }
  if ((largest + 1) * count >= Number.MAX_SAFE_INTEGER) return [...diagnostics].sort(compareInFull);
  for (let i = 0; i < count; i += 1) packed[i] = (packed[i] as number) * count + i;
  packed.sort();
  const sorted: Diagnostic[] = [];
  for (let from = 0; from < count;) {
    const key = Math.floor((packed[from] as number) / count);
    let to = from + 1;
    while (to < count && Math.floor((packed[to] as number) / count) === key) to += 1;
    const run: Diagnostic[] = [];
    for (let k = from; k < to; k += 1) run.push(diagnostics[(packed[k] as number) % count] as Diagnostic);
    if (run.length > 1) run.sort(compareInFull);
    for (const diagnostic of run) sorted.push(diagnostic);
    from = to;
  }
  return sorted;
}

const COLUMNS = 2 ** 21;

function compareInFull(a: Diagnostic, b: Diagnostic): number {
  return (
    a.location.line - b.location.line ||
    a.location.col - b.location.col ||
    spansWhole(a) - spansWhole(b) ||
    compareStrings(a.code ?? '', b.code ?? '') ||
    compareStrings(a.message, b.message)
  );
}

/**
 * The reference orders diagnostics at one position by where their spans end, then by code. Ours carry no span end;
 * the only ones that share a start with another and end later are these two, reported over a field's whole
 * `A | B` value (which starts with the name another diagnostic may be reported at).
 */
const WHOLE_VALUE_CODES = new Set(['allium.sum.v1InlineEnum', 'allium.sum.invalidDiscriminator']);
const spansWhole = (d: Diagnostic): number => (WHOLE_VALUE_CODES.has(d.code ?? '') ? 1 : 0);

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

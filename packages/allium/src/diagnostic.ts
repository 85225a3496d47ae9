/** A 1-based position in a spec file, as the reference checker reports it. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly col: number;
}

/** Diagnostic severity, in the reference checker's lower-case spelling. */
export type Severity = 'error' | 'warning' | 'info';

/**
 * One finding about a spec, in the reference shape (`allium check` JSON). `code` follows the reference's
 * `allium.*` names where the reference has one and is `null` for syntax errors, as the reference does.
 */
export interface Diagnostic {
  readonly code: string | null;
  readonly severity: Severity;
  readonly message: string;
  readonly location: SourceLocation;
}

/**
 * Diagnostics reported at the start of a member access `X.Y` but over the whole of it (an unknown import alias
 * read from `Surface.Parsed`). The reference orders diagnostics at one position by where their spans end, so these
 * come after one reported over the name `X` alone (`Type reference 'Surface' …`); ours carry no span end, so the
 * check that reports one marks it here and the ordering (`inReferenceOrder` in check-specs.ts) reads the mark.
 */
const OVER_MEMBER = new WeakSet<Diagnostic>();

/** Marks `diagnostic` as reported over a whole member access (see {@link OVER_MEMBER}) and returns it. */
export function overMemberAccess(diagnostic: Diagnostic): Diagnostic {
  OVER_MEMBER.add(diagnostic);
  return diagnostic;
}

/** Whether `diagnostic` was marked by {@link overMemberAccess}. */
export function isOverMemberAccess(diagnostic: Diagnostic): boolean {
  return OVER_MEMBER.has(diagnostic);
}

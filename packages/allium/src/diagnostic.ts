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

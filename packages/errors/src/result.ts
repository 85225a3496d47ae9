/** A successful outcome carrying a value. */
export interface Ok<T> {
  readonly ok: true;
  readonly value: T;
}

/** A failed outcome carrying the reasons; callers decide what to do with it. */
export interface Err<E> {
  readonly ok: false;
  readonly issues: E;
}

/** The outcome of parsing or validating at a boundary: `{ ok: true, value } | { ok: false, issues }`. */
export type Result<T, E = readonly string[]> = Ok<T> | Err<E>;

/** Builds a successful {@link Result}. */
export function ok<T>(value: T): Ok<T> {
  return { ok: true, value };
}

/** Builds a failed {@link Result}. */
export function err<E>(issues: E): Err<E> {
  return { ok: false, issues };
}

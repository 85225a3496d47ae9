const BRAND = Symbol.for('allium-loop.error');

/** Fields every allium-loop error carries besides its message. */
export interface AlliumLoopErrorOptions {
  /** Stable machine-readable code, e.g. `ledger.corrupt`. Callers branch on this, never on the message. */
  readonly code: string;
  /** Whether running the same operation again may succeed (a timeout, a busy lease), as opposed to a final failure. */
  readonly retryable?: boolean;
  /** The underlying error, always passed on when there is one. */
  readonly cause?: unknown;
  /** Structured context (file paths, pids, slugs) for reports; never secrets. */
  readonly context?: Readonly<Record<string, unknown>>;
  /** What the user can do next, shown under the message. */
  readonly hint?: string;
}

/**
 * The base of every typed error in allium-loop.
 *
 * Identify one with {@link AlliumLoopError.is} rather than `instanceof`: packages may be loaded twice (source and
 * dist) and the brand survives that. Subclasses set a `code` in the `package.reason` form.
 */
export class AlliumLoopError extends Error {
  /** Stable machine-readable code. */
  readonly code: string;
  /** Whether a retry may succeed. */
  readonly retryable: boolean;
  /** Structured context for reports. */
  readonly context: Readonly<Record<string, unknown>>;
  /** What the user can do next, if anything. */
  readonly hint: string | undefined;
  /** Brand used by {@link AlliumLoopError.is}. */
  readonly [BRAND] = true;

  constructor(message: string, options: AlliumLoopErrorOptions) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = options.code;
    this.retryable = options.retryable ?? false;
    this.context = options.context ?? {};
    this.hint = options.hint;
  }

  /** True when `value` is an allium-loop error from any copy of this package. */
  static is(value: unknown): value is AlliumLoopError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** Renders an error for a person: the message, the hint, and the chain of causes, one per line. */
export function formatError(error: unknown): string {
  const lines: string[] = [];
  let current: unknown = error;
  let depth = 0;
  while (current !== undefined && current !== null && depth < 5) {
    const message = current instanceof Error ? current.message : String(current);
    lines.push(depth === 0 ? message : `  caused by: ${message}`);
    if (depth === 0 && AlliumLoopError.is(current) && current.hint !== undefined)
      lines.push(`  ${current.hint}`);
    current = current instanceof Error ? current.cause : undefined;
    depth += 1;
  }
  return lines.join('\n');
}

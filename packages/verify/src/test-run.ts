/** A test command and why it was chosen. */
export interface TestCommand {
  /** The command line, run without a shell unless it was configured as a shell string. */
  readonly command: string;
  /** Where it came from, e.g. `allium-loop.yaml testCommand` or `package.json test script (npm, package-lock.json)`. */
  readonly source: string;
}

/** One test as the runner reported it. */
export interface TestCase {
  readonly name: string;
  readonly status: 'passed' | 'failed' | 'skipped';
  readonly message?: string;
}

/** The outcome of one test run by the engine. Counts are never invented: unknown stays unknown. */
export interface TestRunResult {
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  /** Where the full output was written. */
  readonly outputPath: string;
  readonly counts:
    | {
        readonly kind: 'known';
        readonly passed: number;
        readonly failed: number;
        readonly skipped: number;
        readonly parser: string;
      }
    | { readonly kind: 'unknown' };
  /** Per-test results when the runner says; empty otherwise. */
  readonly cases: readonly TestCase[];
}

/** A machine-readable report a test command can be asked to write, and the option that asks for it. */
export interface TestReportRequest {
  /** `junit`: JUnit XML (pytest `--junitxml`); `jest-json`: the jest/vitest JSON reporter's document. */
  readonly format: 'junit' | 'jest-json';
  /** Appended to the command line, with `{file}` replaced by the report's path, e.g. `--junitxml={file}`. */
  readonly option: string;
}

/** A test command and why it was chosen. */
export interface TestCommand {
  /** The command line, run by `sh -c` in the project directory. */
  readonly command: string;
  /** Where it came from, e.g. `allium-loop.yaml testCommand` or `package.json test script`. */
  readonly source: string;
  /** Why it was chosen, in one line, e.g. `package.json has a test script; pnpm-lock.yaml names pnpm`. */
  readonly reason: string;
  /** Set when the engine can ask the runner for a machine-readable report. */
  readonly report?: TestReportRequest;
}

/** One test as the runner reported it. */
export interface TestCase {
  readonly name: string;
  readonly status: 'passed' | 'failed' | 'skipped';
  readonly message?: string;
  /**
   * The case stands for a test file (or package, or crate) the runner could not load or compile — an import
   * that does not resolve, a syntax error: always `failed`, named after the file, never "no tests".
   */
  readonly loadError?: true;
}

/** Counts read from a runner's report or output, or the loud admission that they could not be read. */
export type TestCounts =
  | {
      readonly kind: 'known';
      readonly passed: number;
      readonly failed: number;
      readonly skipped: number;
      /** Which parser read them, e.g. `junit-xml`, `vitest-summary`, `tap`, `cargo-summary+pytest-summary`. */
      readonly parser: string;
    }
  | { readonly kind: 'unknown'; readonly reason: string };

/** What a parser made of a run: counts (or unknown) and per-test results when the runner names them. */
export interface ParsedTestOutput {
  readonly counts: TestCounts;
  /** Per-test results when the runner says (all of them, or only the failing ones); empty otherwise. */
  readonly cases: readonly TestCase[];
}

/** The outcome of one test run by the engine. Counts are never invented: unknown stays unknown. */
export interface TestRunResult extends ParsedTestOutput {
  readonly command: TestCommand;
  /** The exit code, or `null` when the process was killed (timeout) or died of a signal. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  /** Where the full output (stdout and stderr, interleaved) was written. */
  readonly outputPath: string;
  /** Where the machine-readable report was written, when one was asked for and produced. */
  readonly reportPath?: string;
}

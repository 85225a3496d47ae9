/** The phase a run starts with. */
export type EntryPoint = 'elicit' | 'distill' | 'tend' | 'weed';

/** Whether the spec leads the code (spec-first) or is recovered from it (code-first). */
export type EntryMode = 'spec-first' | 'code-first';

/** What the edge probe found in the working directory; entry detection reads nothing else. */
export interface ProjectState {
  /** Paths of `.allium` files found, relative to the project root. */
  readonly specFiles: readonly string[];
  /** Whether source code other than specs, tests, docs and config is present. */
  readonly hasCode: boolean;
  /** Whether a test command was found (configured or discovered). */
  readonly hasTestCommand: boolean;
}

/** Where a run starts, why, and the one line that says so to the user. */
export interface EntryDecision {
  readonly entry: EntryPoint;
  readonly mode: EntryMode;
  readonly reason: string;
  readonly announcement: string;
}

/** The phase a run starts with. */
export type EntryPoint = 'elicit' | 'distill' | 'tend' | 'weed';

/** Every entry point, in the order the `--entry` flag lists them. */
export const ENTRY_POINTS: readonly EntryPoint[] = ['elicit', 'distill', 'tend', 'weed'];

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

/**
 * What a goal asks for: `capture` (describe or verify behaviour the code has today), `add` (new behaviour),
 * `change` (make existing behaviour different) or `reconcile` (the spec stands; bring the code back to it).
 */
export type GoalIntent = 'capture' | 'add' | 'change' | 'reconcile';

/** The classifier's reading of a goal: an intent, or `ambiguous` when no intent clearly wins. */
export interface GoalClassification {
  readonly intent: GoalIntent | 'ambiguous';
  /** The words and phrases that matched, in rule order, for the announcement. */
  readonly cues: readonly string[];
  /** The summed weight of the matched cues per intent. */
  readonly scores: Readonly<Record<GoalIntent, number>>;
}

/** Where a run starts, why, and the one line that says so to the user. */
export interface EntryDecision {
  readonly entry: EntryPoint;
  readonly mode: EntryMode;
  /** The goal's intent as classified (the override does not change it). */
  readonly intent: GoalIntent | 'ambiguous';
  /** Whether the entry was forced with `--entry`. */
  readonly overridden: boolean;
  /** Why this entry: project state and intent, in a sentence. */
  readonly reason: string;
  /** One line for the user naming the path, the reason and the `--entry` override. */
  readonly announcement: string;
}

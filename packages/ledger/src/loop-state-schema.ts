import { z } from 'zod';
import { JsonRecordSchema } from './json-value.js';

/**
 * The loop state every loop kind persists in the ledger (`modeState`), typed: a discriminated union on `kind`
 * (`spec`, `verify`, `stories`, `state-file`). A ledger whose loop state does not match is corrupt like any other
 * schema failure: a clear error, nothing destroyed.
 */

const Count = z.number().int().nonnegative();
const list = <T extends z.ZodType>(item: T) => z.array(item).readonly();
const TerminalStateSchema = z.enum([
  'converged',
  'max_ticks',
  'no_progress',
  'budget_exhausted',
  'timed_out',
  'awaiting_input',
  'cancelled',
  'failed',
]);

/**
 * What a port failure that ended a run keeps for the report: its stable code, what the user can do next, and the
 * chain of causes (redacted like the rest of the ledger).
 */
export const PortFailureSchema = z.object({
  code: z.string(),
  hint: z.string().exactOptional(),
  cause: z.string().exactOptional(),
});
export type PortFailure = z.infer<typeof PortFailureSchema>;

const LoopPhaseSchema = z.enum(['elicit', 'distill', 'tend', 'propagate', 'implement', 'weed']);

const TestTermSchema = z.discriminatedUnion('counts', [
  z.object({
    counts: z.literal('known'),
    passed: Count,
    failed: Count,
    skipped: Count,
    failing: list(z.string()),
    exitCode: z.number().int().nullable(),
  }),
  z.object({ counts: z.literal('unknown'), exitCode: z.number().int().nullable(), timedOut: z.boolean() }),
]);

const WeedTermSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('clean') }),
  z.object({ status: z.literal('dirty'), divergences: Count }),
  z.object({ status: z.literal('not_run') }),
]);

const OpenQuestionCountsSchema = z.object({ blocking: Count, parked: Count });

/** The evaluator's observation of one tick. */
const ObservationSchema = z.object({
  tests: TestTermSchema,
  weed: WeedTermSchema,
  structuralErrors: Count,
  openQuestions: OpenQuestionCountsSchema,
  distillNew: Count.exactOptional(),
});

const UnmetTermSchema = z.object({
  term: z.enum([
    'tests_failing',
    'tests_unknown',
    'tests_none',
    'tests_exit_code',
    'weed_dirty',
    'weed_not_run',
    'questions_blocking',
    'questions_parked',
    'structural_errors',
    'distill_new',
    'distill_not_run',
    'harness_changed',
  ]),
  message: z.string(),
  count: z.number().exactOptional(),
  names: list(z.string()).exactOptional(),
});

const DivergenceSchema = z.object({
  construct: z.string(),
  classification: z.enum(['spec-bug', 'code-bug', 'aspirational', 'intentional-gap']),
  detail: z.string(),
});

/** The engine's reconciliation of the spec's obligations with a propagate's tests. */
const ReconciliationSchema = z.object({
  line: z.string(),
  obligations: Count,
  covered: Count,
  uncovered: list(z.object({ id: z.string(), reason: z.string().exactOptional() })),
});

/** The spec loop's state (`decide`'s `LoopState`). */
export const SpecLoopStateSchema = z.object({
  tick: Count,
  stage: z.enum([
    'tick_start',
    'gather',
    'plan',
    'slices',
    'propagate',
    'red_check',
    'implement',
    'measure',
    'weed',
    'evaluate',
    'escalate',
    'witness',
    'done',
  ]),
  route: z.object({
    gather: z.enum(['tend', 'distill']).exactOptional(),
    propagate: z.boolean(),
    implement: z.boolean(),
    vacuous: list(z.string()).exactOptional(),
    reasons: list(z.string()),
  }),
  history: list(
    z.object({
      fingerprint: z.string(),
      actionHash: z.string().exactOptional(),
      fixAttempt: z.object({ targets: list(z.string()), stillFailing: list(z.string()) }).exactOptional(),
      /** Tokens the tick's agent calls used, when known (token-climb detection). */
      tokens: Count.exactOptional(),
    }),
  ),
  verdicts: list(
    z.object({
      tick: Count,
      observation: ObservationSchema,
      fingerprint: z.string(),
      converged: z.boolean(),
      unmet: list(UnmetTermSchema),
      uncovered: Count.exactOptional(),
    }),
  ),
  phaseFailures: z.partialRecord(LoopPhaseSchema, Count),
  innerAttempts: Count,
  specChanged: z.boolean(),
  newTests: list(z.string()),
  vacuous: list(z.string()),
  failing: list(z.string()),
  fixTargets: list(z.string()),
  measured: ObservationSchema.omit({ weed: true, distillNew: true }).exactOptional(),
  weed: WeedTermSchema.exactOptional(),
  divergences: list(DivergenceSchema),
  contested: list(z.string()),
  distillNew: Count.exactOptional(),
  actionHash: z.string().exactOptional(),
  blocking: list(z.string()),
  answered: list(z.string()),
  spentUsd: z.number().nonnegative(),
  elapsedMs: z.number().nonnegative(),
  /** Tokens the run's agent calls used so far, as the driver metered them. */
  tokensUsed: Count.exactOptional(),
  agentCalls: Count,
  terminal: z
    .object({ state: TerminalStateSchema, reason: z.string(), error: PortFailureSchema.exactOptional() })
    .exactOptional(),
  appliedCall: z.string().exactOptional(),
  slices: Count.exactOptional(),
  /** Spec-first: tests propagate generated, and those a red-check saw red, or already green (witness evidence). */
  redBeforeGreen: z
    .object({
      newTests: list(z.string()),
      seenRed: list(z.string()),
      seenGreen: list(z.string()).exactOptional(),
    })
    .exactOptional(),
  /** The parked questions the last gather phase reported. */
  parkedReported: list(z.string()).exactOptional(),
  /** Every phase (and the witness) the loop chose, with its tick and why: the trace's routing. */
  phaseLog: list(z.object({ tick: Count, name: z.string(), reason: z.string() })).exactOptional(),
  /** The last witness verdict at this loop's convergence gate. */
  witness: z
    .object({ tick: Count, verdict: z.enum(['PASS', 'FAIL', 'INCONCLUSIVE']), summary: z.string() })
    .exactOptional(),
  /** The last propagate's reconciliation, as the engine computed it. */
  reconciliation: ReconciliationSchema.exactOptional(),
});

/** The loop caps of a spec run, as stored when it started. */
const SpecCapsSchema = z.object({
  maxTicks: z.number().int().positive(),
  noProgressTicks: z.number().int().positive(),
  maxFixAttempts: z.number().int().positive(),
  innerLoopMax: z.number().int().positive(),
  phaseRetries: Count,
  wallClockMs: z.number().positive().exactOptional(),
  budgetUsd: z.number().positive().exactOptional(),
  maxCallUsd: z.number().positive().exactOptional(),
  reserveUsd: z.number().positive().exactOptional(),
});

/** What a spec run was started with: its caps, question policy, test command and agent configuration. */
export const SpecRunConfigSchema = z.object({
  caps: SpecCapsSchema,
  strictQuestions: z.boolean(),
  testCommand: z.object({
    command: z.string(),
    source: z.string(),
    reason: z.string(),
    report: z.object({ format: z.enum(['junit', 'jest-json']), option: z.string() }).exactOptional(),
  }),
  /** Validated by the agents package when the runner is built. */
  agent: JsonRecordSchema,
  /** `--scope`: project-relative paths that bound every phase (absent or empty: the whole project). */
  scope: z.array(z.string().min(1)).exactOptional(),
  /** `--concurrency N`: slices of a wave that run at once, each in its own git worktree (absent: 1). */
  concurrency: z.number().int().positive().exactOptional(),
});

/** A generated test the engine protects from later edits. */
export const ProtectedTestSchema = z.object({
  /** Repository-relative path of the test file. */
  path: z.string().min(1),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256'),
  /** Where the engine keeps its own copy, relative to `.allium-loop/`, used to revert a tampered file. */
  storedCopy: z.string().min(1),
  recordedAtTick: Count,
});

/**
 * Slices run at once (`--concurrency N`): the merged base every new slice starts from (a commit under
 * `refs/allium-loop/<slug>/merged`), the slices merged into it so far, each finished slice's commit waiting to be
 * merged, and how often each slice went round again after a conflicting or red merge.
 */
const ParallelWaveSchema = z.object({
  merged: z.string(),
  mergedSlices: list(z.string()),
  commits: z.record(z.string(), z.string()),
  rounds: z.record(z.string(), z.number().int().nonnegative()),
  /**
   * The generated tests each unmerged slice protects: they exist only in its worktree (then its commit), so they
   * join the run's `protectedTests` when the slice is merged, never before.
   */
  pendingTests: z.record(z.string(), list(ProtectedTestSchema)).exactOptional(),
});

/** An agent phase's outcome as the loop observed it (`decide`'s `phase_done` observation). */
const PhaseDoneSchema = z.object({
  kind: z.literal('phase_done'),
  phase: LoopPhaseSchema,
  ok: z.boolean(),
  detail: z.string().exactOptional(),
  costUsd: z.number().nonnegative().exactOptional(),
  specChanged: z.boolean().exactOptional(),
  blocking: list(z.string()).exactOptional(),
  parked: list(z.string()).exactOptional(),
  distillNew: Count.exactOptional(),
  newTests: list(z.string()).exactOptional(),
  reconciliation: ReconciliationSchema.exactOptional(),
  contested: list(z.string()).exactOptional(),
  divergences: list(DivergenceSchema).exactOptional(),
});

/** The last agent call of a loop scope and the observation recorded with its end (replayed on resume). */
const LastCallSchema = z.object({ key: z.string(), observation: PhaseDoneSchema });

/**
 * The fingerprint of what the engine runs (verify's `HarnessRecord`, taken at the start of a run). The verify
 * package owns its schema and parses it where it is used (`parseHarnessRecord`); the ledger, below verify, keeps
 * it as a JSON object.
 */
const CommandFingerprintSchema = JsonRecordSchema;

/** `--verify` (with hill-climb). */
export const VerifyModeConfigSchema = z.object({
  command: z.string(),
  intervalMs: Count,
  hillclimb: z
    .object({
      score: z.string(),
      direction: z.enum(['max', 'min']),
      target: z.number().exactOptional(),
    })
    .exactOptional(),
});

export const VerifyModeStateSchema = z.object({
  config: VerifyModeConfigSchema,
  baseline: z
    .object({
      exitCode: z.number().int().nullable(),
      score: z.number().nullable(),
      head: z.string().nullable(),
      outputTail: z.string(),
    })
    .nullable(),
  best: z.object({ score: z.number().nullable(), tick: Count, commit: z.string().nullable() }).nullable(),
  ticks: list(
    z.object({
      tick: Count,
      agentOutcome: z.string(),
      exitCode: z.number().int().nullable(),
      timedOut: z.boolean(),
      durationMs: z.number().nonnegative(),
      score: z.number().nullable(),
      kept: z.boolean().nullable(),
      delta: z.string(),
      outputHash: z.string(),
      /** The git revision (HEAD) after the tick: the revision a resume checks and resets to. */
      head: z.string().nullable().exactOptional(),
      /** Tokens the tick's agent call used, when it reported them (token-climb detection). */
      tokens: Count.exactOptional(),
    }),
  ),
  lastOutput: z.string(),
  fingerprint: CommandFingerprintSchema.nullable(),
  /**
   * The tick under way (plain verify and hill-climb), with the tree it started from and, climbing, the best commit
   * it is judged against, so a tick a crash interrupted is rolled back on resume. `null` (or absent) between ticks.
   */
  pending: z
    .object({ tick: Count, before: z.string(), best: z.string().exactOptional() })
    .nullable()
    .exactOptional(),
});

/** `--stories`. */
export const StoryModeConfigSchema = z.object({
  prdPath: z.string(),
  storyId: z.string().exactOptional(),
  skipEval: z.boolean(),
  evalRetries: Count,
  verifyCommand: z.string().exactOptional(),
  /**
   * What an agent-loop `.loop/config.json` set when the run started: its `mode` (which `{mode}.md` prompts are
   * used) and its scope budgets (the prompts' template variables).
   */
  loop: z
    .object({
      mode: z.string(),
      scopeBudgets: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    })
    .exactOptional(),
});

export const StoryModeStateSchema = z.object({
  config: StoryModeConfigSchema,
  checksums: z
    .object({ criteria: z.record(z.string(), z.string()), verify: CommandFingerprintSchema.nullable() })
    .nullable(),
  iterations: list(
    z.object({
      tick: Count,
      story: z.string(),
      title: z.string(),
      /** `WARN`: no verdict was reached (the generator crashed with nothing else to judge, or the evaluator edited files). */
      verdict: z.enum(['PASS', 'REJECT', 'WARN']),
      reason: z.string().nullable(),
      blocked: z.boolean(),
      at: z.string(),
      /** The generator did not end `ok` (a warning: the iteration went on to be judged). */
      generatorCrash: z.string().exactOptional(),
      /** The snapshot of the tree just before the generator (a commit), which scopes the evaluator's diff. */
      preGenerator: z.string().exactOptional(),
      /** `--skip-eval`: no evaluator ran. */
      skipEval: z.boolean().exactOptional(),
      /**
       * What stall detection compares: the stories' statuses (passes, blocked, rejections) after the iteration and
       * the tree the generator left (PRD and `progress.md` excluded), when git could snapshot it.
       */
      state: z.string().exactOptional(),
      /** Tokens the iteration's agent calls (generator and evaluator) used, when they reported them. */
      tokens: Count.exactOptional(),
    }),
  ),
  /**
   * The files of the last recorded iteration while they are being written (the PRD's text, the `progress.md`
   * entry): saved with the tick, cleared once both are on disk, so a run killed in between writes them on resume
   * and nothing is done twice.
   */
  pending: z.object({ prd: z.string(), progress: z.string() }).exactOptional(),
});

/** `--state-file`. */
export const StateFileModeConfigSchema = z.object({ path: z.string() });

export const StateFileModeStateSchema = z.object({
  config: StateFileModeConfigSchema,
  iterations: list(
    z.object({
      tick: Count,
      agentOutcome: z.string(),
      claimed: z.string(),
      status: z.enum(['pending', 'in_progress', 'done', 'failed']),
      note: z.string().nullable(),
    }),
  ),
  digests: list(z.string()),
  /** Tokens each iteration's agent call used (0 when unknown), for token-climb detection. */
  tokens: list(Count).exactOptional(),
});

const ModeCapsSchema = z.object({
  maxTicks: z.number().int().positive().exactOptional(),
  noProgressTicks: z.number().int().positive().exactOptional(),
  maxFixAttempts: z.number().int().positive().exactOptional(),
  wallClockMs: z.number().int().positive().exactOptional(),
  budgetUsd: z.number().positive().exactOptional(),
  maxCallUsd: z.number().positive().exactOptional(),
  reserveUsd: z.number().positive().exactOptional(),
  agentTimeoutMs: z.number().int().positive().exactOptional(),
  testTimeoutMs: z.number().int().positive().exactOptional(),
});

/** Which mode runs, its configuration and its default caps (what a resume needs besides the agent). */
export const ModeSpecSchema = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('verify'), config: VerifyModeConfigSchema, defaultCaps: ModeCapsSchema }),
  z.object({ mode: z.literal('stories'), config: StoryModeConfigSchema, defaultCaps: ModeCapsSchema }),
  z.object({ mode: z.literal('state-file'), config: StateFileModeConfigSchema, defaultCaps: ModeCapsSchema }),
]);

/** A mode run's settings: the mode spec and the agent configuration (validated by the agents package). */
const ModeRunSchema = z.object({ spec: ModeSpecSchema, agent: JsonRecordSchema });

/** The loop state of a run, by loop kind. */
export const LoopStateSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('spec'),
    config: SpecRunConfigSchema.exactOptional(),
    loop: SpecLoopStateSchema.exactOptional(),
    slices: z.record(z.string(), SpecLoopStateSchema).exactOptional(),
    lastCalls: z.record(z.string(), LastCallSchema).exactOptional(),
    /** The decomposer's plan as far as later passes need it: the integration pass's chains. */
    plan: z.object({ integrationChains: list(list(z.string())) }).exactOptional(),
    /** Slices run at once: the merged base, merged slices, finished commits, rounds (see `ParallelWaveSchema`). */
    parallel: ParallelWaveSchema.exactOptional(),
    /** The harness fingerprint taken when the run started (see `CommandFingerprintSchema`). */
    harness: CommandFingerprintSchema.exactOptional(),
  }),
  z.object({ kind: z.literal('verify'), run: ModeRunSchema, verify: VerifyModeStateSchema.exactOptional() }),
  z.object({ kind: z.literal('stories'), run: ModeRunSchema, stories: StoryModeStateSchema.exactOptional() }),
  z.object({
    kind: z.literal('state-file'),
    run: ModeRunSchema,
    'state-file': StateFileModeStateSchema.exactOptional(),
  }),
]);

/** The spec loop's state. */
export type SpecLoopState = z.infer<typeof SpecLoopStateSchema>;
/** A spec run's stored settings. */
export type SpecRunConfig = z.infer<typeof SpecRunConfigSchema>;
/** `--verify` configuration. */
export type VerifyModeConfig = z.infer<typeof VerifyModeConfigSchema>;
/** `--verify` state. */
export type VerifyModeState = z.infer<typeof VerifyModeStateSchema>;
/** `--stories` configuration. */
export type StoryModeConfig = z.infer<typeof StoryModeConfigSchema>;
/** `--stories` state. */
export type StoryModeState = z.infer<typeof StoryModeStateSchema>;
/** `--state-file` configuration. */
export type StateFileModeConfig = z.infer<typeof StateFileModeConfigSchema>;
/** `--state-file` state. */
export type StateFileModeState = z.infer<typeof StateFileModeStateSchema>;
/** A mode and its configuration. */
export type ModeSpec = z.infer<typeof ModeSpecSchema>;
/** The loop state of a run, by loop kind. */
export type LoopStateRecord = z.infer<typeof LoopStateSchema>;

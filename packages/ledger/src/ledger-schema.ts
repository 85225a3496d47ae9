import { z } from 'zod';
import { JsonRecordSchema, sortKeysDeep } from './json-value.js';
import {
  LoopStateSchema,
  PortFailureSchema,
  ProtectedTestSchema,
  type LoopStateRecord,
} from './loop-state-schema.js';
import { TickVerdictSchema } from './verdict-schema.js';

/** The schema version this package writes. Older documents are migrated on load (see `migrateLedger`). */
export const LEDGER_SCHEMA_VERSION = 3;

const Count = z.number().int().nonnegative();
const Timestamp = z.iso.datetime();

/** A run slug: lowercase words joined by `-`, at most 64 characters. It names `.allium-loop/<slug>.json`. */
export const SlugSchema = z
  .string()
  .max(64)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, 'must be lowercase letters and digits joined by "-"');

/** Which loop of the engine family runs: the Allium spec loop, `--verify`, `--stories`, or a state-file loop. */
export const RunModeSchema = z.enum(['spec', 'verify', 'stories', 'state-file']);

/** Every way a run can end. */
export const TerminalStateSchema = z.enum([
  'converged',
  'max_ticks',
  'no_progress',
  'awaiting_input',
  'timed_out',
  'budget_exhausted',
  'cancelled',
  'failed',
]);

/** The entry point chosen on the first tick, and why. */
export const EntrySchema = z.object({
  path: z.enum(['elicit', 'distill', 'tend', 'weed']),
  mode: z.enum(['spec-first', 'code-first']),
  reason: z.string(),
  /** True when the user forced the path with `--entry`. */
  overridden: z.boolean(),
});

/** How a run ended: the state, a short machine-friendly reason and a human detail. */
export const TerminalSchema = z.object({
  state: TerminalStateSchema,
  reason: z.string(),
  detail: z.string(),
  /** The port failure that ended the run (`failed`, or `timed_out` while retrying one), when one did. */
  error: PortFailureSchema.exactOptional(),
  at: Timestamp,
});

/** The caps in force for this run; they live here so that they hold across resumes. */
export const CapsSchema = z.object({
  maxTicks: z.number().int().positive(),
  noProgressTicks: z.number().int().positive(),
  maxFixAttempts: z.number().int().positive(),
  /** Wall-clock cap for the whole run, summed across resumes; absent = none. */
  wallClockMs: z.number().int().positive().optional(),
  /** Cost cap in USD; absent = none. */
  budgetUsd: z.number().positive().optional(),
  /** The most one agent call may cost: passed to CLIs that accept a budget, and the worst case of the pre-flight. */
  maxCallUsd: z.number().positive().optional(),
  /**
   * The worst case the budget pre-flight reserves for a call when no `maxCallUsd` is given: one full-context turn
   * of the agent's model at list prices (set by the engine from the price table); absent = unknown model.
   */
  reserveUsd: z.number().positive().optional(),
  agentTimeoutMs: z.number().int().positive(),
  testTimeoutMs: z.number().int().positive(),
});

/** What the run has consumed so far, summed across resumes. */
export const SpentSchema = z.object({
  ticks: Count,
  wallMs: Count,
  /** Sum of the costs agents reported or that were priced; `null` while no call had a known cost. */
  usd: z.number().nonnegative().nullable(),
  /** Agent calls whose cost could not be determined: when > 0, `usd` is a lower bound. */
  usdUnknownCalls: Count,
  tokens: z.object({ input: Count, output: Count, cacheRead: Count, cacheWrite: Count }),
  agentCalls: Count,
});

/** The bounded inner loop in progress (the TDD implement loop), so a resume continues its attempt count. */
export const InnerLoopSchema = z.object({
  kind: z.string(),
  startedAtTick: z.number().int().positive(),
  attempt: Count,
  /** What the loop works on, e.g. the names of the failing tests. */
  targets: z.array(z.string()),
});

/** An open question raised by a worker, its classification, and what became of it. */
export const QuestionSchema = z.object({
  id: z.string().min(1),
  text: z.string(),
  classification: z.enum(['blocking', 'parked']),
  /** The assumption made while a parked question stays open. */
  assumption: z.string().nullable(),
  answer: z.string().nullable(),
  /** `answered` once the user replied, `applied` once tend wrote the answer into the spec. */
  status: z.enum(['open', 'answered', 'applied']),
  raisedAtTick: Count,
  phase: z.string(),
});

/** One slice of a decomposed goal, run as its own loop. */
export const SubGoalSchema = z.object({
  id: z.string().min(1),
  slice: z.object({ constructs: z.array(z.string()) }),
  dependsOn: z.array(z.string()),
  status: z.enum(['pending', 'running', 'converged', 'blocked', 'failed', 'skipped']),
  /** The slice's roll-up report once it ended; its shape belongs to the decomposer. */
  report: JsonRecordSchema.nullable(),
});

/** A generated test the engine protects from later edits (defined beside the loop state, which also holds some). */
export { ProtectedTestSchema } from './loop-state-schema.js';

/** How a side effect recorded by an intent ended. */
export const IntentOutcomeSchema = z.object({
  status: z.enum(['succeeded', 'failed', 'abandoned']),
  at: Timestamp,
  detail: z.string().optional(),
});

/** A write-ahead record: written before a side effect, closed with its outcome after. */
export const IntentSchema = z.object({
  /** The idempotency key, e.g. `tick-3/implement/agent`. */
  key: z.string().min(1),
  tick: Count,
  phase: z.string(),
  action: z.string(),
  begunAt: Timestamp,
  /** Anything the reconciler needs: the result file path, the agent, the attempt. */
  data: JsonRecordSchema,
  outcome: IntentOutcomeSchema.nullable(),
});

/** A git object recorded at the end of a tick, under `refs/allium-loop/<slug>/`. */
export const CheckpointSchema = z.object({
  tick: Count,
  ref: z.string(),
  object: z.string().regex(/^[0-9a-f]{40}(?:[0-9a-f]{24})?$/, 'must be a git object id'),
  at: Timestamp,
});

/** A free-form, timestamped history entry. */
export const HistoryEntrySchema = z.object({
  at: Timestamp,
  kind: z.string().min(1),
  message: z.string(),
  data: JsonRecordSchema.optional(),
});

/** The fields of the ledger, as the engine holds it in memory (see {@link LedgerSchema}). */
export const LedgerObjectSchema = z.object({
  schemaVersion: z.literal(LEDGER_SCHEMA_VERSION),
  goal: z.string().min(1),
  slug: SlugSchema,
  mode: RunModeSchema,
  entry: EntrySchema.nullable(),
  status: z.enum(['running', 'terminal']),
  terminal: TerminalSchema.nullable(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  caps: CapsSchema,
  spent: SpentSchema,
  /** The last tick started (0 before the first). */
  tick: Count,
  activeInnerLoop: InnerLoopSchema.nullable(),
  verdicts: z.array(TickVerdictSchema),
  questions: z.array(QuestionSchema),
  subGoals: z.array(SubGoalSchema),
  protectedTests: z.array(ProtectedTestSchema),
  intents: z.array(IntentSchema),
  checkpoints: z.array(CheckpointSchema),
  history: z.array(HistoryEntrySchema),
  /** The loop state of the run, typed by loop kind (`kind` equals `mode`): see `loop-state-schema.ts`. */
  modeState: LoopStateSchema.overwrite((state) => sortKeysDeep(state) as LoopStateRecord),
});

/**
 * The ledger: everything a fresh process needs to continue a run, as the engine holds it (`mode` is the run kind).
 * The single source of truth for its shape; on disk its top level is the upstream Allium ledger's
 * (`stored-ledger.ts`).
 */
export const LedgerSchema = LedgerObjectSchema.refine((ledger) => ledger.modeState.kind === ledger.mode, {
  message: 'the loop state is of another kind than the run mode',
  path: ['modeState', 'kind'],
});

/** Run mode. */
export type RunMode = z.infer<typeof RunModeSchema>;
/** Terminal state. */
export type TerminalState = z.infer<typeof TerminalStateSchema>;
/** Entry point. */
export type Entry = z.infer<typeof EntrySchema>;
/** How a run ended. */
export type Terminal = z.infer<typeof TerminalSchema>;
/** Caps. */
export type Caps = z.infer<typeof CapsSchema>;
/** Consumption. */
export type Spent = z.infer<typeof SpentSchema>;
/** Active inner loop. */
export type InnerLoop = z.infer<typeof InnerLoopSchema>;
/** Open question. */
export type Question = z.infer<typeof QuestionSchema>;
/** Sub-goal. */
export type SubGoal = z.infer<typeof SubGoalSchema>;
/** Protected test. */
export type ProtectedTest = z.infer<typeof ProtectedTestSchema>;
/** Intent outcome. */
export type IntentOutcome = z.infer<typeof IntentOutcomeSchema>;
/** Intent record. */
export type Intent = z.infer<typeof IntentSchema>;
/** Checkpoint. */
export type Checkpoint = z.infer<typeof CheckpointSchema>;
/** History entry. */
export type HistoryEntry = z.infer<typeof HistoryEntrySchema>;
/** The validated ledger document. */
export type Ledger = z.infer<typeof LedgerSchema>;

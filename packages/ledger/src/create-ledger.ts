import type { LoopStateRecord } from './loop-state-schema.js';
import {
  LEDGER_SCHEMA_VERSION,
  LedgerSchema,
  type Caps,
  type Ledger,
  type RunMode,
} from './ledger-schema.js';

/** The caps of ARCHITECTURE.md §5: 6 ticks, 2 no-progress ticks, 3 fix attempts, 30 min per agent call, 10 min per test run. */
export const DEFAULT_CAPS: Caps = {
  maxTicks: 6,
  noProgressTicks: 2,
  maxFixAttempts: 3,
  agentTimeoutMs: 30 * 60_000,
  testTimeoutMs: 10 * 60_000,
};

/** What a new run needs to start its ledger. */
export interface NewLedgerInput {
  readonly goal: string;
  readonly slug: string;
  readonly mode: RunMode;
  /** Overrides of {@link DEFAULT_CAPS}. */
  readonly caps?: Partial<Caps>;
  /** The creation time (the caller's clock). */
  readonly now: Date;
  /** The loop state to start from; default an empty spec-loop state. A mode run passes its stored settings. */
  readonly modeState?: LoopStateRecord;
}

/**
 * Builds the ledger of a fresh run: status `running`, tick 0, nothing spent, every list empty.
 * Throws a zod error when the input is invalid (an empty goal, a malformed slug, a non-positive cap, a mode run
 * without its settings in `modeState`).
 */
export function createLedger(input: NewLedgerInput): Ledger {
  const at = input.now.toISOString();
  return LedgerSchema.parse({
    schemaVersion: LEDGER_SCHEMA_VERSION,
    goal: input.goal,
    slug: input.slug,
    mode: input.mode,
    entry: null,
    status: 'running',
    terminal: null,
    createdAt: at,
    updatedAt: at,
    caps: { ...DEFAULT_CAPS, ...input.caps },
    spent: {
      ticks: 0,
      wallMs: 0,
      usd: null,
      usdUnknownCalls: 0,
      tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      agentCalls: 0,
    },
    tick: 0,
    activeInnerLoop: null,
    verdicts: [],
    questions: [],
    subGoals: [],
    protectedTests: [],
    intents: [],
    checkpoints: [],
    history: [],
    modeState: input.modeState ?? { kind: input.mode },
  });
}

import type { AgentRunner, AgentRunResult } from '@allium-loop/agents';
import type {
  JournalEvent,
  Lease,
  Ledger,
  LedgerStore,
  PortFailure,
  TerminalState,
} from '@allium-loop/ledger';
import type { BackoffPolicy } from '../driver/port-failure.js';

/** Progress a mode shows as it happens; every event is also in the journal. */
export type ModeProgress =
  { readonly kind: 'line'; readonly text: string } | { readonly kind: 'event'; readonly event: JournalEvent };

/** What every mode loop needs: the leased ledger, the agent, the project and the effects it may use. */
export interface ModeContext {
  readonly store: LedgerStore;
  readonly lease: Lease;
  readonly ledger: Ledger;
  readonly agent: AgentRunner;
  /** The project directory the agent and the commands work in. */
  readonly cwd: string;
  /** The state directory, normally `<cwd>/.allium-loop`. */
  readonly stateDir: string;
  /** Environment of the user's own commands (`--verify`); agents build their own minimal one. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly clock: { now(): number };
  /** Cancellable sleep; default a real timer. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** How retryable port failures are retried; default `DEFAULT_BACKOFF`. */
  readonly backoff?: BackoffPolicy;
  readonly signal: AbortSignal;
  readonly onProgress?: (progress: ModeProgress) => void;
}

/** Why a mode loop stops. */
export interface ModeStop {
  readonly state: TerminalState;
  readonly reason: string;
  readonly detail: string;
  /** The port failure that ended the run, with its code, hint and causes. */
  readonly error?: PortFailure;
}

/** One agent call's outcome as a mode sees it: done (any outcome but a rate limit), or a stop of the run. */
export type AgentStep =
  | { readonly kind: 'done'; readonly result: AgentRunResult; readonly resultFile: string }
  | { readonly kind: 'stop'; readonly stop: ModeStop };

/** What a mode measured at the end of a tick, for the ledger's verdict. */
export interface TickMeasure {
  readonly tick: number;
  /** One line: `verify exit 1`, `US-2: REJECT (no tests)`, `state done → in_progress`. */
  readonly measured: string;
  /** Equal on two ticks when nothing measurable changed. */
  readonly fingerprint: string;
  /** Whether the mode's goal held after this tick. */
  readonly converged: boolean;
  readonly head?: string | null;
  /** The tick's line (`tick 2 · …`): journaled as `tick_recorded` with the spend so far, and shown. */
  readonly line?: string;
}

import {
  beginIntent,
  endIntent,
  pendingIntents,
  type JournalEvent,
  type Lease,
  type Ledger,
  type LedgerStore,
} from '@allium-loop/ledger';
import type { Clock } from './loop-ports.js';

/** What one agent call cost, as far as it is known. */
export interface CallSpend {
  /** USD; `undefined` when the agent did not report it (counted apart, never as zero). */
  readonly costUsd?: number | undefined;
  readonly tokens?:
    | {
        readonly input?: number | undefined;
        readonly output?: number | undefined;
        readonly cacheRead?: number | undefined;
        readonly cacheWrite?: number | undefined;
      }
    | undefined;
}

/** Adds one agent call to the ledger's spend: the call, its cost (unknown costs counted apart) and tokens. Pure. */
export function addSpend(ledger: Ledger, call: CallSpend): Ledger {
  const tokens = call.tokens ?? {};
  const spent = ledger.spent;
  return {
    ...ledger,
    spent: {
      ...spent,
      agentCalls: spent.agentCalls + 1,
      usd: call.costUsd === undefined ? spent.usd : (spent.usd ?? 0) + call.costUsd,
      usdUnknownCalls: spent.usdUnknownCalls + (call.costUsd === undefined ? 1 : 0),
      tokens: {
        input: spent.tokens.input + (tokens.input ?? 0),
        output: spent.tokens.output + (tokens.output ?? 0),
        cacheRead: spent.tokens.cacheRead + (tokens.cacheRead ?? 0),
        cacheWrite: spent.tokens.cacheWrite + (tokens.cacheWrite ?? 0),
      },
    },
  };
}

/** The most the next call may spend: the per-call ceiling, or what is left of the budget, whichever is lower. */
export function callBudget(
  caps: { readonly budgetUsd?: number | undefined; readonly maxCallUsd?: number | undefined },
  spentUsd: number,
): number | undefined {
  const remaining = caps.budgetUsd === undefined ? undefined : Math.max(0, caps.budgetUsd - spentUsd);
  const cap = caps.maxCallUsd;
  return remaining === undefined ? cap : cap === undefined ? remaining : Math.min(cap, remaining);
}

/** A signal for one call: it fires when the run is cancelled or when the run's wall-clock cap passes. */
export interface CallSignal {
  readonly signal: AbortSignal;
  /** Whether the wall-clock cap (not the user) ended the call. */
  deadlinePassed(): boolean;
  dispose(): void;
}

/**
 * Enforces the wall-clock cap DURING a call: the returned signal aborts the call (the agent's process tree, the test
 * command) when `remainingMs` passes, not only between calls. `remainingMs` undefined: only the run's signal.
 */
export function callSignal(run: AbortSignal, remainingMs: number | undefined): CallSignal {
  if (remainingMs === undefined)
    return { signal: run, deadlinePassed: () => false, dispose: () => undefined };
  const deadline = new AbortController();
  let passed = false;
  // Node's timer limit (2^31 - 1 ms); a longer cap cannot pass within one call anyway.
  const timer = setTimeout(
    () => {
      passed = true;
      deadline.abort(new Error('wall-clock cap reached'));
    },
    Math.min(Math.max(0, remainingMs), 2_147_483_647),
  );
  return {
    signal: AbortSignal.any([run, deadline.signal]),
    deadlinePassed: () => passed && !run.aborted,
    dispose: () => clearTimeout(timer),
  };
}

/** What {@link RunRecord} writes through. */
export interface RunRecordOptions {
  readonly store: LedgerStore;
  readonly lease: Lease;
  readonly ledger: Ledger;
  readonly clock: Clock;
  /** Called with the ledger after every write. */
  readonly onLedger?: (ledger: Ledger) => void;
  /** Called with every journal event after it was written. */
  readonly onEvent?: (event: JournalEvent) => void;
}

/**
 * The one place a loop writes its run: journal before ledger, the wall clock summed across resumes, agent calls as
 * intents (begun before the call, ended with its spend), abandoned calls. Both the spec loop's driver and the loop
 * modes write through it.
 */
export class RunRecord {
  private current: Ledger;
  private readonly startedAt: number;
  private readonly baseWallMs: number;

  constructor(private readonly options: RunRecordOptions) {
    this.current = options.ledger;
    this.startedAt = options.clock.now();
    this.baseWallMs = options.ledger.spent.wallMs;
  }

  /** The ledger as last persisted. */
  get ledger(): Ledger {
    return this.current;
  }

  /** Takes over a ledger another writer of the same run persisted (a nested slice loop). */
  adopt(ledger: Ledger): void {
    this.current = ledger;
  }

  now(): Date {
    return new Date(this.options.clock.now());
  }

  /** Wall-clock time of the run, summed across resumes. */
  elapsedMs(): number {
    return this.baseWallMs + Math.max(0, this.options.clock.now() - this.startedAt);
  }

  /** What is left of a wall-clock cap, or `undefined` without one. */
  remainingMs(wallClockMs: number | undefined): number | undefined {
    return wallClockMs === undefined ? undefined : wallClockMs - this.elapsedMs();
  }

  /** Appends `events` to the journal, then saves `ledger`: a crash in between leaves the journal ahead, never behind. */
  async persist(ledger: Ledger, events: readonly JournalEvent[] = []): Promise<void> {
    if (events.length > 0) await this.options.store.append(this.options.lease, events);
    await this.options.store.save(this.options.lease, ledger);
    this.current = ledger;
    this.options.onLedger?.(ledger);
    for (const event of events) this.options.onEvent?.(event);
  }

  /** Records the intent of an agent call in `ledger` before it starts (with `intent_begun` and `extra` events). */
  async beginCall(
    ledger: Ledger,
    key: string,
    intent: { readonly tick: number; readonly phase: string; readonly data: Record<string, unknown> },
    extra: readonly JournalEvent[] = [],
  ): Promise<void> {
    const at = this.now();
    const begun = beginIntent(ledger, key, { ...intent, action: 'agent-call', at });
    await this.persist(begun.ledger, [
      {
        type: 'intent_begun',
        at: at.toISOString(),
        tick: intent.tick,
        key,
        phase: intent.phase,
        action: 'agent-call',
      },
      ...extra,
    ]);
  }

  /** The ledger with call `key` ended and its spend added. Pure: the caller persists it with its own events. */
  endCall(
    ledger: Ledger,
    key: string,
    end: { readonly ok: boolean; readonly detail?: string | undefined; readonly at: Date },
    spend: CallSpend,
  ): Ledger {
    const ended = endIntent(ledger, key, {
      status: end.ok ? 'succeeded' : 'failed',
      at: end.at,
      ...(end.detail === undefined ? {} : { detail: end.detail }),
    });
    return addSpend(ended, spend);
  }

  /**
   * Ends the calls `inScope` selects that never got an outcome, appending their `intent_ended` events to `journal`.
   * Pure: the caller persists the result.
   */
  abandon(
    ledger: Ledger,
    inScope: (key: string) => boolean,
    detail: string,
    at: Date,
    journal: JournalEvent[],
  ): Ledger {
    let next = ledger;
    for (const intent of pendingIntents(ledger).filter((i) => inScope(i.key))) {
      next = endIntent(next, intent.key, { status: 'abandoned', detail, at });
      journal.push({
        type: 'intent_ended',
        at: at.toISOString(),
        tick: intent.tick,
        key: intent.key,
        status: 'abandoned',
        detail,
      });
    }
    return next;
  }
}

import {
  beginIntent,
  endIntent,
  pendingIntents,
  type JournalEvent,
  type Lease,
  type Ledger,
  type LedgerStore,
  type PortFailure,
  type TerminalState,
  type TickVerdict,
} from '@allium-loop/ledger';
import type { Clock } from './loop-ports.js';
import {
  DEFAULT_BACKOFF,
  describeFailure,
  planRetry,
  type BackoffPolicy,
  type DescribedFailure,
} from './port-failure.js';
import { abortableSleep, waitForRateLimit, type RateLimitWait } from './wait-for-rate-limit.js';

/** How often one call may wait out a rate limit before the run fails. */
export const MAX_RATE_LIMIT_WAITS = 20;

/** How an action tried under {@link RunRecord.retrying} ended. */
export type Attempted<T> =
  /** It returned; `deadlinePassed` when the wall-clock cap passed while it ran (it was aborted). */
  | { readonly kind: 'done'; readonly value: T; readonly deadlinePassed: boolean }
  | { readonly kind: 'cancelled' }
  /** The wall clock ran out: during the action (it threw), or before a retry could run. */
  | { readonly kind: 'deadline'; readonly failure: DescribedFailure }
  /** A failure that is not retried (not retryable, or its tries are used up). */
  | { readonly kind: 'failed'; readonly failure: DescribedFailure };

/** What {@link RunRecord.retrying} needs besides the action. */
export interface RetryOptions {
  readonly signal: AbortSignal;
  readonly wallClockMs: number | undefined;
  readonly backoff?: BackoffPolicy | undefined;
  readonly sleep?: ((ms: number, signal: AbortSignal) => Promise<void>) | undefined;
  readonly tick: number;
  /** What is tried, for the journal note of a retry: `implement`, `the step call`. */
  readonly what: string;
  /** Journals the note of a retry (the caller's persistence stamps it); default {@link RunRecord.persist}. */
  readonly journal?: (events: readonly JournalEvent[]) => Promise<void>;
}

/** A run's end as both loops record it. */
export interface TerminalRecord {
  readonly state: TerminalState;
  readonly reason: string;
  readonly detail: string;
  readonly error?: PortFailure | undefined;
}

/**
 * The ledger of a run whose process was killed between journaling the run's end and saving the ledger
 * ({@link RunRecord.persist} appends to the journal first): the ledger still says running, but the journal holds a
 * `terminal` event after its last `run_started`. The end happened, so the ledger is brought level with the journal:
 * the terminal record, and the calls that end abandoned (the `intent_ended` events of the same batch). `undefined`
 * when the ledger already ended or the journal holds no end of the current session. Pure.
 */
export function ledgerAtJournaledEnd(ledger: Ledger, events: readonly JournalEvent[]): Ledger | undefined {
  if (ledger.status === 'terminal') return undefined;
  let started = events.length - 1;
  while (started >= 0 && events[started]?.type !== 'run_started') started -= 1;
  let next: Ledger | undefined;
  for (const event of events.slice(started + 1)) {
    if (event.type === 'terminal') {
      const error = event.error === undefined ? {} : { error: event.error };
      next = {
        ...(next ?? ledger),
        status: 'terminal',
        updatedAt: event.at,
        terminal: { state: event.state, reason: event.reason, detail: event.detail, ...error, at: event.at },
      };
    } else if (next !== undefined && event.type === 'intent_ended' && event.status === 'abandoned') {
      const key = event.key;
      if (next.intents.some((intent) => intent.key === key))
        next = endIntent(next, key, {
          status: 'abandoned',
          at: new Date(event.at),
          ...(event.detail === undefined ? {} : { detail: event.detail }),
        });
    }
  }
  return next;
}

/**
 * On resume, under the lease: saves the ledger brought level with a journaled end in the run's journal, `events`
 * ({@link ledgerAtJournaledEnd}), and returns it, or returns `ledger` as it is.
 */
export async function settleJournaledEnd(
  store: LedgerStore,
  lease: Lease,
  ledger: Ledger,
  events: readonly JournalEvent[],
): Promise<Ledger> {
  const settled = ledgerAtJournaledEnd(ledger, events);
  if (settled === undefined) return ledger;
  await store.save(lease, settled);
  return settled;
}

/** The `terminal` journal event of `terminal`. Pure. */
export function terminalEvent(terminal: TerminalRecord, at: Date, tick: number): JournalEvent {
  return {
    type: 'terminal',
    at: at.toISOString(),
    tick,
    state: terminal.state,
    reason: terminal.reason,
    detail: terminal.detail,
    ...(terminal.error === undefined ? {} : { error: terminal.error }),
  };
}

/**
 * A tick's verdict in `ledger.verdicts` (replacing an earlier one of the same tick), with its `verdict` event and,
 * given a tick line, its `tick_recorded` event carrying the spend so far. Pure.
 */
export function recordVerdict(
  ledger: Ledger,
  verdict: TickVerdict,
  at: Date,
  line?: string,
): { readonly ledger: Ledger; readonly events: JournalEvent[] } {
  const stamp = { at: at.toISOString(), tick: verdict.tick };
  return {
    ledger: { ...ledger, verdicts: [...ledger.verdicts.filter((v) => v.tick !== verdict.tick), verdict] },
    events: [
      { type: 'verdict', ...stamp, verdict },
      ...(line === undefined
        ? []
        : [{ type: 'tick_recorded' as const, ...stamp, line, usd: ledger.spent.usd }]),
    ],
  };
}

/** The `phase_ended` and `intent_ended` events of an agent call that ended. Pure. */
export function callEndedEvents(call: {
  readonly at: Date;
  readonly tick: number;
  readonly key: string;
  readonly phase: string;
  readonly ok: boolean;
  readonly durationMs: number;
  readonly detail?: string | undefined;
}): JournalEvent[] {
  const stamp = { at: call.at.toISOString(), tick: call.tick };
  return [
    {
      type: 'phase_ended',
      ...stamp,
      phase: call.phase,
      outcome: call.ok ? 'ok' : 'failed',
      durationMs: call.durationMs,
      ...(call.detail === undefined ? {} : { detail: call.detail }),
    },
    { type: 'intent_ended', ...stamp, key: call.key, status: call.ok ? 'succeeded' : 'failed' },
  ];
}

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

  /** `ledger` stamped now: `updatedAt` and the wall clock summed across resumes. Pure. */
  stamped(ledger: Ledger): Ledger {
    return {
      ...ledger,
      updatedAt: this.now().toISOString(),
      spent: { ...ledger.spent, wallMs: this.elapsedMs() },
    };
  }

  /** Starts tick `tick` of `ledger`: the counter moves (and `phase_started` is journaled) before any work. */
  async beginTick(ledger: Ledger, tick: number, phase: string): Promise<Ledger> {
    const next = this.stamped({ ...ledger, tick, spent: { ...ledger.spent, ticks: ledger.spent.ticks + 1 } });
    await this.persist(next, [{ type: 'phase_started', at: this.now().toISOString(), tick, phase }]);
    return next;
  }

  /**
   * Records the end of the run in `ledger` and the journal; calls still pending in `inScope` are abandoned (they
   * will not run again).
   */
  async finish(
    ledger: Ledger,
    terminal: TerminalRecord,
    extra: readonly JournalEvent[] = [],
    inScope: (key: string) => boolean = () => true,
  ): Promise<Ledger> {
    const at = this.now();
    const journal: JournalEvent[] = [...extra, terminalEvent(terminal, at, ledger.tick)];
    const ended = this.abandon(ledger, inScope, 'the run ended before this call was re-run', at, journal);
    const error = terminal.error === undefined ? {} : { error: terminal.error };
    const next = this.stamped({
      ...ended,
      status: 'terminal',
      terminal: {
        state: terminal.state,
        reason: terminal.reason,
        detail: terminal.detail,
        ...error,
        at: at.toISOString(),
      },
    });
    await this.persist(next, journal);
    return next;
  }

  /**
   * The one retry loop: runs `act` under the wall-clock deadline (the signal it gets aborts when the cap passes, or
   * on Ctrl-C); a port failure it throws that is marked retryable is tried again after the backoff of
   * {@link planRetry} (a journaled note, a cancellable sleep) while tries and wall clock are left.
   */
  async retrying<T>(
    act: (signal: AbortSignal, attempt: number) => Promise<T>,
    options: RetryOptions,
  ): Promise<Attempted<T>> {
    for (let attempt = 1; ; attempt += 1) {
      const call = callSignal(options.signal, this.remainingMs(options.wallClockMs));
      let failure: DescribedFailure;
      try {
        const value = await act(call.signal, attempt);
        return { kind: 'done', value, deadlinePassed: call.deadlinePassed() };
      } catch (error) {
        if (call.deadlinePassed()) return { kind: 'deadline', failure: describeFailure(error) };
        if (call.signal.aborted) return { kind: 'cancelled' };
        failure = describeFailure(error);
      } finally {
        call.dispose();
      }
      const retry = planRetry(failure, attempt, this.remainingMs(options.wallClockMs), options.backoff);
      if (!retry.retry) return { kind: retry.why === 'wall_clock' ? 'deadline' : 'failed', failure };
      const note: JournalEvent = {
        type: 'note',
        at: this.now().toISOString(),
        tick: options.tick,
        message: `${options.what} failed (${failure.code}, retryable): try ${String(attempt + 1)} of ${String((options.backoff ?? DEFAULT_BACKOFF).maxAttempts)} in ${String(retry.delayMs)} ms`,
        data: { code: failure.code, attempt, delayMs: retry.delayMs },
      };
      await (options.journal ?? ((events) => this.persist(this.current, events)))([note]);
      try {
        await (options.sleep ?? abortableSleep)(retry.delayMs, options.signal);
      } catch {
        return { kind: 'cancelled' };
      }
      if (options.signal.aborted) return { kind: 'cancelled' };
    }
  }

  /**
   * Waits out a rate limit until its reset (a fallback wait without one), never past the wall-clock cap (the wait
   * counts against it), and journals the wait as `<eventType>` with `data`.
   */
  async waitOutRateLimit(options: {
    readonly resetAt: number | undefined;
    readonly tick: number;
    readonly signal: AbortSignal;
    readonly wallClockMs: number | undefined;
    readonly sleep?: ((ms: number, signal: AbortSignal) => Promise<void>) | undefined;
    readonly eventType: `x-${string}`;
    readonly data?: Record<string, unknown>;
  }): Promise<RateLimitWait> {
    const remaining = this.remainingMs(options.wallClockMs);
    const now = this.options.clock.now();
    const wait = await waitForRateLimit(
      {
        outcome: 'rate_limited',
        ...(options.resetAt === undefined ? {} : { rateLimitResetAt: options.resetAt }),
      },
      {
        now: () => this.options.clock.now(),
        sleep: options.sleep ?? abortableSleep,
        signal: options.signal,
        ...(remaining === undefined ? {} : { wallClockDeadline: now + remaining }),
      },
    );
    const data = {
      ...wait,
      ...options.data,
      ...(options.resetAt === undefined ? {} : { resetAt: new Date(options.resetAt).toISOString() }),
    };
    await this.persist(this.stamped(this.current), [
      {
        type: options.eventType,
        at: this.now().toISOString(),
        tick: options.tick,
        data: JSON.parse(JSON.stringify(data)) as Record<string, never>,
      },
    ]);
    return wait;
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

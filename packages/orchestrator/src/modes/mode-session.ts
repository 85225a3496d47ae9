import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentPhase, AgentRunResult } from '@allium-loop/agents';
import { AlliumLoopError } from '@allium-loop/errors';
import type { JournalEvent, Ledger, LoopStateRecord, TickVerdict } from '@allium-loop/ledger';
import { budgetStop } from '../decide/decide.js';
import {
  describeFailure,
  failureDetail,
  planRetry,
  portFailure,
  type DescribedFailure,
} from '../driver/port-failure.js';
import { callBudget, callSignal, RunRecord } from '../driver/run-record.js';
import type { AgentStep, ModeContext, ModeStop, TickMeasure } from './mode-context.js';
import { abortableSleep, waitForRateLimit } from '../driver/wait-for-rate-limit.js';

const MAX_RATE_LIMIT_WAITS = 20;

/** Whether a run's typed loop state is of `kind`. */
export function isLoopKind<K extends LoopStateRecord['kind']>(
  record: LoopStateRecord,
  kind: K,
): record is Extract<LoopStateRecord, { kind: K }> {
  return record.kind === kind;
}

/** The loop state of `ledger`, which must be of `kind` (the schema ties it to the run's mode). */
export function loopRecord<K extends LoopStateRecord['kind']>(
  ledger: Ledger,
  kind: K,
): Extract<LoopStateRecord, { kind: K }> {
  const record = ledger.modeState;
  if (!isLoopKind(record, kind))
    throw new AlliumLoopError(`Run "${ledger.slug}" holds a ${record.kind} loop state, not a ${kind} one.`, {
      code: 'modes.wrong_mode',
    });
  return record;
}

/** A duration for people: `90 s`, `12 min`. */
export function seconds(ms: number): string {
  return ms >= 120_000 ? `${String(Math.round(ms / 60_000))} min` : `${String(Math.round(ms / 1000))} s`;
}

/**
 * What the mode loops add to the driver's {@link RunRecord} (persistence, intents, spend, wall clock): ticks, the
 * caps between ticks (Ctrl-C, wall clock, budget pre-flight, ticks), agent calls under the wall-clock deadline and
 * the budget pre-flight, rate-limit waits, and the terminal record. Each mode keeps its own state in its variant
 * of the typed loop state (`ledger.modeState`, kind = mode).
 */
export class ModeSession {
  private readonly record: RunRecord;

  constructor(
    private readonly context: ModeContext,
    /** The journal prefix of this mode's extension events: `verify`, `stories`, `state-file`. */
    readonly mode: string,
  ) {
    this.record = new RunRecord({
      store: context.store,
      lease: context.lease,
      ledger: context.ledger,
      clock: context.clock,
      onEvent: (event) => this.context.onProgress?.({ kind: 'event', event }),
    });
  }

  /** The ledger as last persisted. */
  get ledger(): Ledger {
    return this.record.ledger;
  }

  private get current(): Ledger {
    return this.record.ledger;
  }

  /** The working directory of the run. */
  get cwd(): string {
    return this.context.cwd;
  }

  /** The signal that cancels the run. */
  get signal(): AbortSignal {
    return this.context.signal;
  }

  /** The user's environment, for the commands the user configured. */
  get env(): Readonly<Record<string, string | undefined>> {
    return this.context.env;
  }

  /** `.allium-loop/<slug>/` — results, transcripts and mode files of this run. */
  get runDir(): string {
    return join(this.context.stateDir, this.current.slug);
  }

  /** The state directory, excluded from checkpoints. */
  get stateDir(): string {
    return this.context.stateDir;
  }

  /** Epoch milliseconds now. */
  now(): number {
    return this.context.clock.now();
  }

  /** Wall-clock time of the run, summed across resumes. */
  elapsedMs(): number {
    return this.record.elapsedMs();
  }

  /** Shows a progress line. */
  say(text: string): void {
    this.context.onProgress?.({ kind: 'line', text });
  }

  /** An extension event `x-<mode>.<name>` stamped now. */
  event(name: string, data: Record<string, unknown>, tick = this.current.tick): JournalEvent {
    return {
      type: `x-${this.mode}.${name}`,
      at: new Date(this.now()).toISOString(),
      tick,
      data: JSON.parse(JSON.stringify(data)) as Record<string, never>,
    };
  }

  /** Appends events, then saves the ledger with the wall clock brought up to date. */
  async persist(ledger: Ledger, events: readonly JournalEvent[] = []): Promise<void> {
    const next: Ledger = {
      ...ledger,
      updatedAt: new Date(this.now()).toISOString(),
      spent: { ...ledger.spent, wallMs: this.elapsedMs() },
    };
    await this.record.persist(next, events);
  }

  /** Saves the run's loop state (this mode's part of it changed), with events. */
  async saveState(modeState: LoopStateRecord, events: readonly JournalEvent[] = []): Promise<void> {
    await this.persist({ ...this.current, modeState }, events);
  }

  /**
   * Saves this mode's state together with the tick's verdict in `ledger.verdicts`, the shape `status` and `report`
   * read for every run: the mode's own measurement goes in the test term's reason (its check is the test), the
   * spec-only terms are empty, and `converged` says whether the mode's goal held after this tick.
   */
  async saveTick(
    modeState: LoopStateRecord,
    tick: TickMeasure,
    events: readonly JournalEvent[] = [],
  ): Promise<void> {
    const at = new Date(this.now()).toISOString();
    const verdict: TickVerdict = {
      tick: tick.tick,
      at,
      tests: { status: 'unknown', reason: tick.measured },
      weed: { status: 'skipped', divergences: [] },
      structural: { errors: 0, messages: [] },
      openQuestions: { blocking: 0, parked: 0 },
      distillNew: null,
      fingerprint: tick.fingerprint,
      git: { head: tick.head ?? null, tree: null },
      converged: tick.converged,
    };
    const verdicts = [...this.current.verdicts.filter((v) => v.tick !== tick.tick), verdict];
    await this.persist({ ...this.current, verdicts, modeState }, [
      { type: 'verdict', at, tick: tick.tick, verdict },
      ...events,
    ]);
  }

  /** Closes intents a crashed process left open: the step they announced runs again in a new tick. */
  async abandonPendingIntents(): Promise<void> {
    const events: JournalEvent[] = [];
    const ledger = this.record.abandon(
      this.current,
      () => true,
      'interrupted; the step runs again',
      new Date(this.now()),
      events,
    );
    if (events.length > 0) await this.persist(ledger, events);
  }

  /** The cap that stops the run before another tick, if any: Ctrl-C, wall clock, budget, ticks. */
  capReached(): ModeStop | undefined {
    const { caps, spent } = this.current;
    if (this.signal.aborted)
      return { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' };
    if (caps.wallClockMs !== undefined && this.elapsedMs() >= caps.wallClockMs)
      return {
        state: 'timed_out',
        reason: 'wall_clock',
        detail: `wall-clock cap of ${seconds(caps.wallClockMs)} reached`,
      };
    const budget = budgetStop(caps, spent.usd ?? 0);
    if (budget !== undefined) return { state: 'budget_exhausted', reason: 'budget', detail: budget };
    if (this.current.tick >= caps.maxTicks)
      return {
        state: 'max_ticks',
        reason: 'max_ticks',
        detail: `tick cap of ${String(caps.maxTicks)} reached`,
      };
    return undefined;
  }

  /** Starts the next tick: the counter moves in the ledger before any work of the tick. */
  async beginTick(): Promise<number> {
    const tick = this.current.tick + 1;
    const spent = { ...this.current.spent, ticks: this.current.spent.ticks + 1 };
    await this.persist({ ...this.current, tick, spent }, [
      { type: 'phase_started', at: new Date(this.now()).toISOString(), tick, phase: `${this.mode}:tick` },
    ]);
    return tick;
  }

  /** The result file of the agent call `name` in the current tick: `.allium-loop/<slug>/results/<tick>-<name>.json`. */
  resultFile(name: string): string {
    return join(this.runDir, 'results', `${String(this.current.tick)}-${name}.json`);
  }

  /**
   * Runs one agent call of `phase` in this tick: the intent is saved first, the result file is
   * `.allium-loop/<slug>/results/<tick>-<name>.json`, the remaining budget is passed on, the spend is recorded.
   * A rate limit is waited out (shown, journaled, counted against the wall clock) and the call repeated without a
   * new tick; an abort, or a reset beyond the wall-clock cap, stops the run.
   */
  async callAgent(phase: AgentPhase, name: string, prompt: string): Promise<AgentStep> {
    const tick = this.current.tick;
    const resultFile = this.resultFile(name);
    let failures = 0;
    for (let attempt = 1; ; attempt += 1) {
      // Pre-flight before every call (a tick may make several): its worst case must fit the budget.
      const budget = budgetStop(this.current.caps, this.current.spent.usd ?? 0);
      if (budget !== undefined)
        return { kind: 'stop', stop: { state: 'budget_exhausted', reason: 'budget', detail: budget } };
      const key = `tick-${String(tick)}/${name}/${String(attempt)}`;
      const recorded = await this.runRecorded(key, phase, prompt, resultFile);
      if ('failure' in recorded) {
        failures += 1;
        const stop = await this.retryOrStop(recorded.failure, failures, name);
        if (stop !== undefined) return { kind: 'stop', stop };
        continue;
      }
      const { result, deadlinePassed } = recorded;
      if (deadlinePassed)
        return {
          kind: 'stop',
          stop: {
            state: 'timed_out',
            reason: 'wall_clock',
            detail: `wall-clock cap of ${seconds(this.current.caps.wallClockMs ?? 0)} reached during the ${name} call, which was stopped`,
          },
        };
      if (result.outcome === 'aborted' || this.signal.aborted)
        return {
          kind: 'stop',
          stop: { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' },
        };
      if (result.outcome !== 'rate_limited') return { kind: 'done', result, resultFile };
      if (attempt > MAX_RATE_LIMIT_WAITS)
        return {
          kind: 'stop',
          stop: {
            state: 'failed',
            reason: 'rate_limited',
            detail: `${this.context.agent.name} stayed rate limited after ${String(MAX_RATE_LIMIT_WAITS)} waits`,
          },
        };
      const stop = await this.waitOutRateLimit(result);
      if (stop !== undefined) return { kind: 'stop', stop };
    }
  }

  private async runRecorded(
    key: string,
    phase: AgentPhase,
    prompt: string,
    resultFile: string,
  ): Promise<{ result: AgentRunResult; deadlinePassed: boolean } | { failure: DescribedFailure }> {
    const tick = this.current.tick;
    // A result file left by an earlier attempt must not pass for this call's.
    await rm(resultFile, { force: true });
    const budget = callBudget(this.current.caps, this.current.spent.usd ?? 0);
    await this.record.beginCall(this.current, key, {
      tick,
      phase,
      data: { resultFile, ...(budget === undefined ? {} : { budgetUsd: budget }) },
    });
    const call = callSignal(this.signal, this.record.remainingMs(this.current.caps.wallClockMs));
    let result: AgentRunResult;
    try {
      result = await this.context.agent.run({
        prompt,
        cwd: this.context.cwd,
        phase,
        resultFile,
        timeoutMs: this.current.caps.agentTimeoutMs,
        signal: call.signal,
        ...(budget === undefined ? {} : { budgetUsd: budget }),
      });
    } catch (error) {
      // The port failed (it could not start the agent, write its transcript…): the call ends failed, its cost
      // unknown, and the caller retries a retryable failure or stops with its code, hint and causes.
      const failure = describeFailure(error);
      const end = new Date(this.now());
      await this.persist(
        this.record.endCall(this.current, key, { ok: false, detail: failure.code, at: end }, {}),
        [
          {
            type: 'intent_ended',
            at: end.toISOString(),
            tick,
            key,
            status: 'failed',
            detail: failureDetail(failure),
          },
        ],
      );
      return { failure: call.deadlinePassed() ? { ...failure, retryable: false } : failure };
    } finally {
      call.dispose();
    }
    const ok = result.outcome === 'ok';
    const detail = ok
      ? undefined
      : `${result.outcome}${result.detail === undefined ? '' : `: ${result.detail}`}`;
    const end = new Date(this.now());
    const ledger = this.record.endCall(this.current, key, { ok, detail, at: end }, result);
    await this.persist(ledger, [
      {
        type: 'phase_ended',
        at: end.toISOString(),
        tick,
        phase,
        outcome: ok ? 'ok' : 'failed',
        durationMs: result.durationMs,
        ...(detail === undefined ? {} : { detail }),
      },
      { type: 'intent_ended', at: end.toISOString(), tick, key, status: ok ? 'succeeded' : 'failed' },
    ]);
    return { result, deadlinePassed: call.deadlinePassed() };
  }

  /**
   * After the `failures`-th port failure of a call: waits out the backoff of {@link planRetry} and returns nothing
   * (try again), or returns the stop: `cancelled`, `timed_out` (the wall clock passed or would pass during the
   * wait), or `failed` with the failure's code, hint and causes.
   */
  private async retryOrStop(
    failure: DescribedFailure,
    failures: number,
    name: string,
  ): Promise<ModeStop | undefined> {
    const error = portFailure(failure);
    if (this.signal.aborted)
      return { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' };
    const remainingMs = this.record.remainingMs(this.current.caps.wallClockMs);
    if (remainingMs !== undefined && remainingMs <= 0)
      return {
        state: 'timed_out',
        reason: 'wall_clock',
        detail: `wall-clock cap reached during the ${name} call`,
        error,
      };
    const retry = planRetry(failure, failures, remainingMs, this.context.backoff);
    if (!retry.retry)
      return retry.why === 'wall_clock'
        ? {
            state: 'timed_out',
            reason: 'wall_clock',
            detail: `${failureDetail(failure)}; no time left to retry`,
            error,
          }
        : { state: 'failed', reason: 'port_failure', detail: failureDetail(failure), error };
    await this.persist(this.current, [
      {
        type: 'note',
        at: new Date(this.now()).toISOString(),
        tick: this.current.tick,
        message: `the ${name} call failed (${failure.code}, retryable): trying again in ${String(retry.delayMs)} ms`,
        data: { code: failure.code, failures, delayMs: retry.delayMs },
      },
    ]);
    try {
      await (this.context.sleep ?? abortableSleep)(retry.delayMs, this.signal);
    } catch {
      return { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' };
    }
    return undefined;
  }

  private async waitOutRateLimit(result: AgentRunResult): Promise<ModeStop | undefined> {
    const wallClockMs = this.current.caps.wallClockMs;
    const deadline = wallClockMs === undefined ? undefined : this.now() + (wallClockMs - this.elapsedMs());
    const resetAt = result.rateLimitResetAt;
    this.say(
      resetAt === undefined
        ? `rate limited by ${this.context.agent.name}; no reset time given, waiting before trying again`
        : `rate limited by ${this.context.agent.name}; waiting until ${new Date(resetAt).toISOString()} (${seconds(Math.max(0, resetAt - this.now()))})`,
    );
    const wait = await waitForRateLimit(result, {
      now: () => this.now(),
      sleep: this.context.sleep ?? abortableSleep,
      signal: this.signal,
      ...(deadline === undefined ? {} : { wallClockDeadline: deadline }),
    });
    await this.persist(this.current, [
      this.event('rate_limit_wait', {
        ...wait,
        agent: this.context.agent.name,
        ...(resetAt === undefined ? {} : { resetAt: new Date(resetAt).toISOString() }),
      }),
    ]);
    if (wait.kind === 'aborted')
      return { state: 'cancelled', reason: 'cancelled', detail: 'cancelled while waiting out a rate limit' };
    if (wait.kind === 'deadline')
      return {
        state: 'timed_out',
        reason: 'wall_clock',
        detail: 'the rate limit resets after the wall-clock cap',
      };
    return undefined;
  }

  /** Records the terminal state (ledger and journal) and returns the final ledger. */
  async finish(stop: ModeStop, extra: readonly JournalEvent[] = []): Promise<Ledger> {
    const at = new Date(this.now()).toISOString();
    const error = stop.error === undefined ? {} : { error: stop.error };
    const terminal = { state: stop.state, reason: stop.reason, detail: stop.detail, ...error, at };
    await this.persist({ ...this.current, status: 'terminal', terminal }, [
      ...extra,
      {
        type: 'terminal',
        at,
        tick: this.current.tick,
        state: stop.state,
        reason: stop.reason,
        detail: stop.detail,
        ...error,
      },
    ]);
    return this.current;
  }
}

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentPhase, AgentRunResult } from '@allium-loop/agents';
import { AlliumLoopError } from '@allium-loop/errors';
import type { JournalEvent, Ledger, LoopStateRecord, TickVerdict } from '@allium-loop/ledger';
import { budgetStop, capStop, seconds } from '../decide/decide.js';
import { createGitSnapshots, type GitSnapshots } from '../project/git.js';
import { failureDetail, portFailure } from '../driver/port-failure.js';
import {
  callBudget,
  callEndedEvents,
  MAX_RATE_LIMIT_WAITS,
  recordVerdict,
  RunRecord,
} from '../driver/run-record.js';
import type { AgentStep, ModeContext, ModeStop, TickMeasure } from './mode-context.js';

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

export { seconds } from '../decide/decide.js';

/**
 * The API the mode programs are carried out through: a thin facade over the driver's {@link RunRecord}, which holds
 * the one copy of the bookkeeping the spec loop's driver uses too (persistence, ticks, intents, spend, the one retry
 * loop, rate-limit waits, the terminal record) and over the caps of `decide/` (`capStop`, `budgetStop`). Nothing
 * here keeps its own books: each method names the mode's journal prefix, result file or agent and delegates. Each
 * mode keeps its own state in its variant of the typed loop state (`ledger.modeState`, kind = mode).
 */
export class ModeSession {
  private readonly record: RunRecord;
  private gitSession: GitSnapshots | undefined;

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

  /**
   * The run's git session (the one snapshot mechanism of `project/git.ts`), covering the whole work tree: a mode
   * reverts an agent's edit wherever it made it. Its index files live in the run's folder.
   */
  get git(): GitSnapshots {
    return (this.gitSession ??= createGitSnapshots(this.cwd, join(this.runDir, 'git-index'), {
      cover: 'repository',
    }));
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

  /** Saves the ledger with `events` (journal first), stamped with the time and the wall clock. */
  async persist(ledger: Ledger, events: readonly JournalEvent[] = []): Promise<void> {
    await this.record.persist(this.record.stamped(ledger), events);
  }

  /** Saves the run's loop state (this mode's part of it changed), with events. */
  async saveState(modeState: LoopStateRecord, events: readonly JournalEvent[] = []): Promise<void> {
    await this.persist({ ...this.current, modeState }, events);
  }

  /**
   * Saves this mode's state together with the tick's verdict in `ledger.verdicts`, the shape `status` and `report`
   * read for every run: the mode's own measurement goes in the test term's reason (its check is the test), the
   * spec-only terms are empty, and `converged` says whether the mode's goal held after this tick. With a tick
   * `line`, the `tick_recorded` event is journaled and the line shown.
   */
  async saveTick(
    modeState: LoopStateRecord,
    tick: TickMeasure,
    events: readonly JournalEvent[] = [],
  ): Promise<void> {
    const at = new Date(this.now());
    const verdict: TickVerdict = {
      tick: tick.tick,
      at: at.toISOString(),
      tests: { status: 'unknown', reason: tick.measured },
      weed: { status: 'skipped', divergences: [] },
      structural: { errors: 0, messages: [] },
      openQuestions: { blocking: 0, parked: 0 },
      distillNew: null,
      fingerprint: tick.fingerprint,
      git: { head: tick.head ?? null, tree: null },
      converged: tick.converged,
    };
    const recorded = recordVerdict({ ...this.current, modeState }, verdict, at, tick.line);
    const [first, ...rest] = recorded.events;
    await this.persist(recorded.ledger, [first!, ...events, ...rest]);
    if (tick.line !== undefined) this.say(tick.line);
  }

  /** Closes intents a crashed process left open: the step they announced runs again in a new tick. */
  async abandonPendingIntents(): Promise<void> {
    const events: JournalEvent[] = [];
    const at = new Date(this.now());
    const ledger = this.record.abandon(
      this.current,
      () => true,
      'interrupted; the step runs again',
      at,
      events,
    );
    if (events.length > 0) await this.persist(ledger, events);
  }

  /** The cap that stops the run before another tick, if any: Ctrl-C, wall clock, budget, ticks (`capStop`). */
  capReached(): ModeStop | undefined {
    return capStop(this.current.caps, {
      cancelled: this.signal.aborted,
      elapsedMs: this.elapsedMs(),
      spentUsd: this.current.spent.usd ?? 0,
      tick: this.current.tick,
    });
  }

  /** Starts the next tick: the counter moves in the ledger before any work of the tick. */
  async beginTick(): Promise<number> {
    const next = await this.record.beginTick(this.current, this.current.tick + 1, `${this.mode}:tick`);
    return next.tick;
  }

  /** The result file of the agent call `name` in the current tick: `.allium-loop/<slug>/results/<tick>-<name>.json`. */
  resultFile(name: string): string {
    return join(this.runDir, 'results', `${String(this.current.tick)}-${name}.json`);
  }

  /**
   * Runs one agent call of `phase` in this tick through the driver: the budget pre-flight, the intent saved first,
   * the result file `.allium-loop/<slug>/results/<tick>-<name>.json`, the remaining budget passed on, the spend
   * recorded; port failures go through the one retry loop ({@link RunRecord.retrying}); a rate limit is waited out
   * ({@link RunRecord.waitOutRateLimit}) and the call repeated without a new tick.
   */
  async callAgent(phase: AgentPhase, name: string, prompt: string): Promise<AgentStep> {
    const resultFile = this.resultFile(name);
    let calls = 0;
    for (let waits = 0; ; waits += 1) {
      const attempted = await this.record.retrying(
        async (signal) => {
          // Pre-flight before every call (a tick may make several): its worst case must fit the budget.
          const budget = budgetStop(this.current.caps, this.current.spent.usd ?? 0);
          if (budget !== undefined) return { kind: 'budget' as const, detail: budget };
          calls += 1;
          const key = `tick-${String(this.current.tick)}/${name}/${String(calls)}`;
          return {
            kind: 'ran' as const,
            result: await this.runRecorded(key, phase, prompt, resultFile, signal),
          };
        },
        {
          signal: this.signal,
          wallClockMs: this.current.caps.wallClockMs,
          backoff: this.context.backoff,
          sleep: this.context.sleep,
          tick: this.current.tick,
          what: `the ${name} call`,
          journal: (events) => this.persist(this.current, events),
        },
      );
      const stop = this.callStop(attempted, name);
      if (stop !== undefined) return { kind: 'stop', stop };
      if (attempted.kind !== 'done') throw new Error('unreachable: a call that did not end stops the run');
      const ran = attempted.value;
      if (ran.kind === 'budget')
        return { kind: 'stop', stop: { state: 'budget_exhausted', reason: 'budget', detail: ran.detail } };
      const result = ran.result;
      if (result.outcome !== 'rate_limited') return { kind: 'done', result, resultFile };
      if (waits >= MAX_RATE_LIMIT_WAITS)
        return {
          kind: 'stop',
          stop: {
            state: 'failed',
            reason: 'rate_limited',
            detail: `${this.context.agent.name} stayed rate limited after ${String(MAX_RATE_LIMIT_WAITS)} waits`,
          },
        };
      const waited = await this.waitOutRateLimit(result);
      if (waited !== undefined) return { kind: 'stop', stop: waited };
    }
  }

  /** The stop of a call the retry loop ended: Ctrl-C, the wall clock, a failure that is not retried. */
  private callStop(
    attempted: Awaited<ReturnType<RunRecord['retrying']>>,
    name: string,
  ): ModeStop | undefined {
    const cancelled = { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' } as const;
    switch (attempted.kind) {
      case 'cancelled':
        return cancelled;
      case 'deadline':
        return {
          state: 'timed_out',
          reason: 'wall_clock',
          detail: `${failureDetail(attempted.failure)}; no time left to retry`,
          error: portFailure(attempted.failure),
        };
      case 'failed':
        return {
          state: 'failed',
          reason: 'port_failure',
          detail: failureDetail(attempted.failure),
          error: portFailure(attempted.failure),
        };
      case 'done': {
        if (attempted.deadlinePassed)
          return {
            state: 'timed_out',
            reason: 'wall_clock',
            detail: `wall-clock cap of ${seconds(this.current.caps.wallClockMs ?? 0)} reached during the ${name} call, which was stopped`,
          };
        const value = attempted.value as { kind: string; result?: AgentRunResult };
        if (value.result?.outcome === 'aborted' || this.signal.aborted) return cancelled;
        return undefined;
      }
    }
  }

  /** One agent call, recorded as an intent with its spend; a port failure is recorded, then thrown on. */
  private async runRecorded(
    key: string,
    phase: AgentPhase,
    prompt: string,
    resultFile: string,
    signal: AbortSignal,
  ): Promise<AgentRunResult> {
    const tick = this.current.tick;
    // A result file left by an earlier attempt must not pass for this call's.
    await rm(resultFile, { force: true });
    const budget = callBudget(this.current.caps, this.current.spent.usd ?? 0);
    await this.record.beginCall(this.current, key, {
      tick,
      phase,
      data: { resultFile, ...(budget === undefined ? {} : { budgetUsd: budget }) },
    });
    const started = this.now();
    let result: AgentRunResult;
    try {
      result = await this.context.agent.run({
        prompt,
        cwd: this.context.cwd,
        phase,
        resultFile,
        timeoutMs: this.current.caps.agentTimeoutMs,
        signal,
        ...(budget === undefined ? {} : { budgetUsd: budget }),
      });
    } catch (error) {
      // The port failed (it could not start the agent, write its transcript…): the call ends failed, its cost
      // unknown; the driver's retry loop retries a retryable failure or stops with its code, hint and causes.
      const end = new Date(this.now());
      const detail = error instanceof Error ? error.message : String(error);
      await this.persist(this.record.endCall(this.current, key, { ok: false, detail, at: end }, {}), [
        ...callEndedEvents({
          at: end,
          tick,
          key,
          phase,
          ok: false,
          durationMs: end.getTime() - started,
          detail,
        }),
      ]);
      throw error;
    }
    const ok = result.outcome === 'ok';
    const detail = ok
      ? undefined
      : `${result.outcome}${result.detail === undefined ? '' : `: ${result.detail}`}`;
    const end = new Date(this.now());
    const ledger = this.record.endCall(this.current, key, { ok, detail, at: end }, result);
    await this.persist(
      ledger,
      callEndedEvents({ at: end, tick, key, phase, ok, durationMs: result.durationMs, detail }),
    );
    return result;
  }

  private async waitOutRateLimit(result: AgentRunResult): Promise<ModeStop | undefined> {
    const resetAt = result.rateLimitResetAt;
    this.say(
      resetAt === undefined
        ? `rate limited by ${this.context.agent.name}; no reset time given, waiting before trying again`
        : `rate limited by ${this.context.agent.name}; waiting until ${new Date(resetAt).toISOString()} (${seconds(Math.max(0, resetAt - this.now()))})`,
    );
    const wait = await this.record.waitOutRateLimit({
      resetAt,
      tick: this.current.tick,
      signal: this.signal,
      wallClockMs: this.current.caps.wallClockMs,
      sleep: this.context.sleep,
      eventType: `x-${this.mode}.rate_limit_wait`,
      data: { agent: this.context.agent.name },
    });
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

  /** Records the terminal state (ledger and journal) through the driver and returns the final ledger. */
  async finish(stop: ModeStop, extra: readonly JournalEvent[] = []): Promise<Ledger> {
    return this.record.finish(this.current, stop, extra);
  }
}

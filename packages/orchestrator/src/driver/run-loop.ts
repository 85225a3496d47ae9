import {
  pendingIntents,
  type Intent,
  type JournalEvent,
  type Lease,
  type Ledger,
  type LedgerStore,
  type Question,
} from '@allium-loop/ledger';
import { INTEGRATION_ID } from '@allium-loop/decomposer';
import { stallWarning } from '@allium-loop/evaluator';
import { decide } from '../decide/decide.js';
import type { LoopAction, LoopObservation, SliceFocus } from '../decide/loop-action.js';
import { initialLoopState, type LoopConfig, type LoopPhase, type LoopState } from '../decide/loop-state.js';
import { formatTickLine, formatUsd } from './format-tick-line.js';
import {
  readLoopState,
  specRecord,
  syncLedger,
  syncSliceLedger,
  toJournal,
  toLedgerVerdict,
} from './ledger-sync.js';
import type { Clock, LoopPorts, MeasureReport, PhaseReport, PhaseRequest } from './loop-ports.js';
import { rollUpSlices } from './slice-roll-up.js';
import { runWitnessStep } from './witness-step.js';
import { loopTrace, renderTrace, runTrace } from './trace.js';
import { failureDetail, portFailure, type BackoffPolicy } from './port-failure.js';
import {
  callBudget,
  callEndedEvents,
  MAX_RATE_LIMIT_WAITS,
  recordVerdict,
  RunRecord,
  terminalEvent,
} from './run-record.js';
import { runSlicesAtOnce, type ParallelSlices } from '../parallel/run-wave.js';

export { MAX_RATE_LIMIT_WAITS } from './run-record.js';

/** Progress a renderer shows as it happens: phase markers and tick lines. Everything is also in the journal. */
export type LoopProgress =
  | { readonly kind: 'marker'; readonly text: string }
  | { readonly kind: 'tick'; readonly line: string }
  | { readonly kind: 'event'; readonly event: JournalEvent };

/** What {@link runLoop} needs. */
export interface RunLoopOptions {
  readonly store: LedgerStore;
  readonly lease: Lease;
  readonly ledger: Ledger;
  readonly config: LoopConfig;
  readonly ports: LoopPorts;
  readonly clock: Clock;
  readonly signal: AbortSignal;
  readonly onProgress?: (progress: LoopProgress) => void;
  /** Called with the ledger after every write, so ports can read the current questions and protected tests. */
  readonly onLedger?: (ledger: Ledger) => void;
  /** How retryable port failures are retried; default {@link DEFAULT_BACKOFF}. */
  readonly backoff?: BackoffPolicy;
  /** Cancellable sleep for rate-limit waits and retry backoff; default a real timer. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Set when this loop runs one slice of a decomposed goal (its state lives in `modeState.slices[id]`). */
  readonly slice?: SliceFocus;
  /** `--concurrency N` (N > 1): the slices of a decomposed goal run at once in worktrees (see `parallel/`). */
  readonly parallel?: ParallelSlices;
}

const MARKERS: Readonly<Record<LoopAction['kind'], string>> = {
  phase: '',
  red_check: '→ Act: red-check (new tests must fail first)',
  measure: '→ Verify: tests → structural → open questions',
  ask: '→ Escalate: blocking questions',
  plan: '→ Plan: slices from the spec change',
  run_slices: '→ Slices: each as its own loop, then the integration pass',
  witness: '→ Witness: re-run the tests, re-hash the generated tests, check the claim',
  terminal: '',
};

function markerFor(action: LoopAction): string {
  if (action.kind !== 'phase') return MARKERS[action.kind];
  const stage = ['elicit', 'distill', 'tend'].includes(action.phase)
    ? 'Gather'
    : action.phase === 'weed'
      ? 'Verify'
      : 'Act';
  return `→ ${stage}: ${action.phase}`;
}

/**
 * Carries out `decide`'s actions through the ports until a terminal state, persisting the loop state after every
 * decision and writing an intent to the ledger before every agent call. Safe to call again in a fresh process with
 * the ledger it left: pending intents are reconciled, never silently dropped or done twice.
 */
export async function runLoop(options: RunLoopOptions): Promise<Ledger> {
  const driver = new LoopDriver(options);
  return driver.run();
}

/** How the slices ended when one of them (or the wave) did not converge: the run's terminal state and why. */
type SlicesEnd = NonNullable<Extract<LoopObservation, { kind: 'slices_done' }>['terminal']>;

/**
 * A phase's questions and protected tests in the ledger: the questions it raised that the ledger does not hold yet
 * (returned as `raised`), the ones it applied marked so, and the protected tests it reported.
 */
function withPhaseQuestions(
  ledger: Ledger,
  request: PhaseRequest,
  report: PhaseReport,
): { ledger: Ledger; raised: Question[] } {
  const known = new Set(ledger.questions.map((q) => q.id));
  const raised = report.questions
    .filter((q) => !known.has(q.id))
    .map((q): Question => ({ ...q, raisedAtTick: request.tick, phase: request.phase }));
  const applied = new Set(report.appliedQuestions ?? []);
  return {
    raised,
    ledger: {
      ...ledger,
      questions: [...ledger.questions, ...raised].map((q) =>
        applied.has(q.id) ? { ...q, status: 'applied' as const } : q,
      ),
      ...(report.protectedTests === undefined ? {} : { protectedTests: [...report.protectedTests] }),
    },
  };
}

class LoopDriver {
  private ledger: Ledger;
  private state: LoopState;
  private readonly record: RunRecord;
  /** The signal of the action under way: the run's, plus the wall-clock deadline. */
  private actionSignal: AbortSignal;
  private lastMeasure: MeasureReport | undefined;
  /** The intent key whose outcome the next decision takes in. */
  private observedCall: string | undefined;
  private cachedRedCheck: { passing: readonly string[]; failing: readonly string[] } | undefined;

  constructor(private readonly options: RunLoopOptions) {
    this.ledger = options.ledger;
    this.state = readLoopState(options.ledger, options.slice?.id) ?? initialLoopState();
    this.actionSignal = options.signal;
    this.record = new RunRecord({
      store: options.store,
      lease: options.lease,
      ledger: options.ledger,
      clock: options.clock,
      ...(options.onLedger === undefined ? {} : { onLedger: options.onLedger }),
      onEvent: (event) => this.progress({ kind: 'event', event }),
    });
  }

  async run(): Promise<Ledger> {
    let observation = await this.reconcile();
    for (;;) {
      if (this.options.signal.aborted) {
        // The observation is dropped; a recorded call outcome stays unapplied, so resume replays it.
        observation = { kind: 'cancelled' };
        this.observedCall = undefined;
      }
      const elapsedMs = this.elapsed();
      const decision = this.decideNext(observation, elapsedMs);
      const at = this.now();
      const journal = toJournal(decision.events, this.state.tick, at);
      let ledger =
        this.options.slice === undefined
          ? syncLedger(this.ledger, this.state, at, elapsedMs)
          : syncSliceLedger(this.ledger, this.options.slice.id, this.state, at);
      ledger = await this.recordTicks(ledger, decision.events, journal, at);
      if (decision.action.kind === 'terminal') ledger = this.endRun(ledger, decision.action, journal, at);
      await this.persist(ledger, journal);
      if (decision.events.some((event) => event.kind === 'tick_recorded')) await this.afterTick();
      if (decision.action.kind === 'terminal') return this.ledger;
      this.progress({ kind: 'marker', text: `${this.slicePrefix()}${markerFor(decision.action)}` });
      observation = await this.execute(decision.action);
    }
  }

  /** `decide` on the observation; the new state remembers which recorded call outcome it took in. */
  private decideNext(observation: LoopObservation, elapsedMs: number): ReturnType<typeof decide> {
    const tokens = this.ledger.spent.tokens;
    const decision = decide(this.state, observation, this.options.config, {
      elapsedMs,
      tokens: tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite,
    });
    this.state =
      this.observedCall === undefined
        ? decision.state
        : { ...decision.state, appliedCall: this.observedCall };
    this.observedCall = undefined;
    return decision;
  }

  /**
   * Each tick the decision recorded: its verdict (the whole run's ledger only), its journal lines, its progress
   * line and its checkpoint. Appends to `journal`; returns the ledger with verdicts and checkpoints.
   */
  private async recordTicks(
    start: Ledger,
    events: ReturnType<typeof decide>['events'],
    journal: JournalEvent[],
    at: Date,
  ): Promise<Ledger> {
    let ledger = start;
    for (const event of events) {
      if (event.kind !== 'tick_recorded') continue;
      const usd = formatUsd(ledger.spent.usd, ledger.spent.usdUnknownCalls);
      const line = `${this.slicePrefix()}${formatTickLine(event.verdict, usd)}`;
      if (this.options.slice === undefined) {
        const verdict = toLedgerVerdict(event.verdict, this.state, this.lastMeasure, at);
        const recorded = recordVerdict(ledger, verdict, at, line);
        journal.push(...recorded.events);
        ledger = recorded.ledger;
      } else {
        const stamp = { at: at.toISOString(), tick: event.verdict.tick };
        journal.push({ type: 'tick_recorded', ...stamp, line, usd: ledger.spent.usd });
      }
      this.progress({ kind: 'tick', line });
      ledger = await this.checkpoint(ledger, event.verdict.tick);
    }
    return ledger;
  }

  /** The run (or this slice) ends: the terminal event (whole run only) and every call still open abandoned. */
  private endRun(
    ledger: Ledger,
    action: Extract<LoopAction, { kind: 'terminal' }>,
    journal: JournalEvent[],
    at: Date,
  ): Ledger {
    if (this.options.slice === undefined) {
      const ended = { state: action.state, reason: action.state, detail: action.reason };
      journal.push(terminalEvent({ ...ended, error: this.state.terminal?.error }, at, this.state.tick));
    }
    return this.record.abandon(
      ledger,
      (key) => this.inScope(key),
      'the run ended before this call was re-run',
      at,
      journal,
    );
  }

  /** `[<slice id>] ` inside a slice loop, else nothing: the prefix of its progress lines. */
  private slicePrefix(): string {
    return this.options.slice === undefined ? '' : `[${this.options.slice.id}] `;
  }

  /**
   * Runs one action under the wall-clock deadline: a cap that passes during the action aborts it. A port failure
   * marked retryable is tried again after the backoff of {@link planRetry} while tries and wall clock are left; any
   * other failure ends the run `failed` with its code, hint and causes.
   */
  private async execute(action: Exclude<LoopAction, { kind: 'terminal' }>): Promise<LoopObservation> {
    const attempted = await this.record.retrying(
      async (signal) => {
        this.actionSignal = signal;
        try {
          return await this.act(action, signal);
        } finally {
          this.actionSignal = this.options.signal;
        }
      },
      {
        signal: this.options.signal,
        wallClockMs: this.options.config.caps.wallClockMs,
        backoff: this.options.backoff,
        sleep: this.options.sleep,
        tick: this.state.tick,
        what: action.kind,
        journal: (events) => this.persist(this.ledger, events),
      },
    );
    switch (attempted.kind) {
      case 'done':
        return attempted.deadlinePassed ? { kind: 'deadline' } : attempted.value;
      case 'cancelled':
        return { kind: 'cancelled' };
      case 'deadline':
        return { kind: 'deadline', error: portFailure(attempted.failure) };
      case 'failed':
        return {
          kind: 'failed',
          reason: failureDetail(attempted.failure),
          error: portFailure(attempted.failure),
        };
    }
  }

  /** Carries out one action; a port failure is thrown to {@link execute}. */
  private async act(
    action: Exclude<LoopAction, { kind: 'terminal' }>,
    signal: AbortSignal,
  ): Promise<LoopObservation> {
    switch (action.kind) {
      case 'phase':
        return await this.runPhase(action.phase, action.focus);
      case 'red_check': {
        const cached = this.cachedRedCheck;
        this.cachedRedCheck = undefined;
        const result = cached ?? (await this.options.ports.redCheck(action.tests, signal));
        return { kind: 'red_checked', passing: result.passing, failing: result.failing };
      }
      case 'measure': {
        this.lastMeasure = await this.options.ports.measure(signal);
        return this.lastMeasure.observation;
      }
      case 'ask':
        return await this.ask(action.questions);
      case 'plan':
        return await this.plan();
      case 'run_slices':
        return await this.runSlices();
      case 'witness':
        return await this.witness();
    }
  }

  private request(phase: LoopPhase, focus: PhaseRequest['focus']): PhaseRequest {
    const budget = callBudget(this.options.config.caps, this.state.spentUsd);
    const prefix = this.options.slice === undefined ? '' : `slice:${this.options.slice.id}/`;
    const stem = `${prefix}tick-${String(this.state.tick)}/${phase}/`;
    // An interrupted call of this phase is re-run under its own key (so replayed agents replay the same step);
    // otherwise calls of a phase within a tick are numbered in order.
    const interrupted = this.ledger.intents.find(
      (intent) => intent.outcome === null && intent.key.startsWith(stem),
    );
    const calls = this.ledger.intents.filter((intent) => intent.key.startsWith(stem)).length;
    return {
      phase,
      focus: this.options.slice === undefined ? focus : { ...focus, slice: this.options.slice },
      tick: this.state.tick,
      key: interrupted?.key ?? `${stem}${String(calls + 1)}`,
      ...(budget === undefined ? {} : { budgetUsd: budget }),
      signal: this.actionSignal,
    };
  }

  /**
   * Runs one agent phase: the intent is saved first; a rate limit is waited out (shown, journaled, counted against
   * the wall clock) and the phase run again under the next key of the same tick, without using a retry.
   */
  private async runPhase(phase: LoopPhase, focus: PhaseRequest['focus']): Promise<LoopObservation> {
    for (let waits = 0; ; waits += 1) {
      const request = this.request(phase, focus);
      await this.record.beginCall(
        this.ledger,
        request.key,
        {
          tick: request.tick,
          phase,
          data: {
            focus: JSON.parse(JSON.stringify(focus)) as Record<string, unknown>,
            ...(request.budgetUsd === undefined ? {} : { budgetUsd: request.budgetUsd }),
          },
        },
        [{ type: 'phase_started', at: this.now().toISOString(), tick: request.tick, phase }],
      );
      this.ledger = this.record.ledger;
      const report = await this.options.ports.runPhase(request);
      this.cachedRedCheck = report.redCheck;
      if (report.rateLimited === undefined || request.signal.aborted) {
        const observation = await this.recordPhase(request, report, 'succeeded');
        // Recorded first (intent ended, spend counted), then the run stops: retrying a refused key only burns ticks.
        return report.stopReason === undefined ? observation : { kind: 'failed', reason: report.stopReason };
      }
      if (waits >= MAX_RATE_LIMIT_WAITS) {
        await this.recordPhase(request, report, 'succeeded');
        return {
          kind: 'failed',
          reason: `rate_limited: the agent stayed rate limited after ${String(MAX_RATE_LIMIT_WAITS)} waits`,
        };
      }
      await this.recordCallOnly(request, report);
      const waited = await this.waitOutRateLimit(request.tick, report.rateLimited);
      if (waited !== undefined) return waited;
    }
  }

  /** Ends a rate-limited call (its spend counts) without handing its outcome to `decide`. */
  private async recordCallOnly(request: PhaseRequest, report: PhaseReport): Promise<void> {
    const at = this.now();
    const detail = report.observation.detail ?? 'rate limited';
    const ledger = this.record.endCall(
      this.ledger,
      request.key,
      { ok: false, at, detail },
      { costUsd: report.costKnown ? report.observation.costUsd : undefined, tokens: report.tokens },
    );
    await this.persist(
      ledger,
      callEndedEvents({
        at,
        tick: request.tick,
        key: request.key,
        phase: request.phase,
        ok: false,
        durationMs: report.durationMs,
        detail,
      }),
    );
  }

  /** Waits until the reset (never past the wall-clock cap); the observation that ends the phase, if any. */
  private async waitOutRateLimit(
    tick: number,
    limit: { readonly resetAt?: number },
  ): Promise<LoopObservation | undefined> {
    const wait = await this.record.waitOutRateLimit({
      resetAt: limit.resetAt,
      tick,
      signal: this.options.signal,
      wallClockMs: this.options.config.caps.wallClockMs,
      sleep: this.options.sleep,
      eventType: 'x-loop.rate_limit_wait',
    });
    this.ledger = this.record.ledger;
    if (wait.kind === 'aborted') return { kind: 'cancelled' };
    if (wait.kind === 'deadline') return { kind: 'deadline' };
    return undefined;
  }

  private async recordPhase(
    request: PhaseRequest,
    report: PhaseReport,
    status: 'succeeded' | 'reconciled',
    alreadyJournaled = false,
  ): Promise<LoopObservation> {
    const at = this.now();
    const stamp = { at: at.toISOString(), tick: request.tick };
    let ledger = this.record.endCall(
      this.ledger,
      request.key,
      {
        ok: report.observation.ok,
        at,
        detail:
          status === 'reconciled' ? 'reconciled from the result file left by an interrupted run' : undefined,
      },
      { costUsd: report.costKnown ? report.observation.costUsd : undefined, tokens: report.tokens },
    );
    // The outcome is kept with the intent's end, so a supervisor killed before acting on it does not lose it.
    const record = specRecord(ledger);
    ledger = {
      ...ledger,
      modeState: {
        ...record,
        lastCalls: {
          ...record.lastCalls,
          [this.scopeId()]: { key: request.key, observation: report.observation },
        },
      },
    };
    this.observedCall = request.key;
    // After every agent phase, so that resume can tell the loop's own edits from drift made by someone else.
    ledger = await this.checkpoint(ledger, request.tick, 'after-last-phase');
    const { ledger: next, raised } = withPhaseQuestions(ledger, request, report);
    const journal: JournalEvent[] = [
      ...report.events.map((event) => ({ ...event, ...stamp }) as JournalEvent),
      ...raised.map((question): JournalEvent => ({ type: 'question_raised', ...stamp, question })),
      ...callEndedEvents({
        at,
        tick: request.tick,
        key: request.key,
        phase: request.phase,
        ok: report.observation.ok,
        durationMs: report.durationMs,
        detail: report.observation.detail,
      }),
    ];
    await this.persist(next, alreadyJournaled ? [] : journal);
    return report.observation;
  }

  /** Pending agent-call intents from a previous process: accept a valid result, otherwise abandon and re-run. */
  private async reconcile(): Promise<LoopObservation> {
    const prefix = this.options.slice === undefined ? undefined : `slice:${this.options.slice.id}/`;
    const pending = pendingIntents(this.ledger).filter((intent) =>
      prefix === undefined ? !intent.key.startsWith('slice:') : intent.key.startsWith(prefix),
    );
    let observation: LoopObservation = { kind: 'start' };
    // A supervisor killed between appending a call's end to the journal and saving the ledger leaves the intent
    // pending in the ledger but ended in the journal: its end is recorded again in the ledger only.
    const journaled =
      pending.length === 0
        ? new Set<string>()
        : new Set(
            (await this.options.store.readJournal(this.ledger.slug)).events.flatMap((e) =>
              e.type === 'intent_ended' ? [e.key] : [],
            ),
          );
    for (const intent of pending) {
      const request = requestFromIntent(intent, this.options.signal);
      const report = intent.action === 'agent-call' ? await this.options.ports.reconcile(request) : undefined;
      if (report !== undefined) {
        observation = await this.recordPhase(request, report, 'reconciled', journaled.has(intent.key));
        continue;
      }
      const at = this.now().toISOString();
      await this.persist(this.ledger, [
        {
          type: 'note',
          at,
          tick: intent.tick,
          message: `call ${intent.key} was interrupted without a valid result; it runs again under the same key`,
        },
      ]);
    }
    if (observation.kind === 'start') observation = await this.replayRecordedOutcome();
    return observation;
  }

  /**
   * The last call of this scope ended (its outcome is recorded) but the loop state never took it in: the
   * supervisor stopped in between. Its recorded outcome is replayed into the decision instead of running it again.
   */
  private async replayRecordedOutcome(): Promise<LoopObservation> {
    const last = specRecord(this.ledger).lastCalls?.[this.scopeId()];
    if (last === undefined || last.key === this.state.appliedCall) {
      return { kind: 'start' };
    }
    this.observedCall = last.key;
    await this.persist(this.ledger, [
      {
        type: 'note',
        at: this.now().toISOString(),
        tick: this.state.tick,
        message: `call ${last.key} had ended before the supervisor stopped; its recorded outcome is used, not a re-run`,
      },
    ]);
    return last.observation;
  }

  private scopeId(): string {
    return this.options.slice?.id ?? '';
  }

  private async ask(ids: readonly string[]): Promise<LoopObservation> {
    const questions = this.ledger.questions.filter((q) => ids.includes(q.id));
    const answers =
      this.options.ports.ask === undefined ? undefined : await this.options.ports.ask(questions);
    if (answers === undefined || answers.length === 0) {
      return { kind: 'failed', reason: 'blocking questions were not answered' };
    }
    const at = this.now();
    const ledger = {
      ...this.ledger,
      questions: this.ledger.questions.map((q) => {
        const answer = answers.find((a) => a.id === q.id);
        return answer === undefined ? q : { ...q, answer: answer.answer, status: 'answered' as const };
      }),
    };
    await this.persist(
      ledger,
      answers.map((a): JournalEvent => ({
        type: 'question_answered',
        at: at.toISOString(),
        tick: this.state.tick,
        id: a.id,
        answer: a.answer,
      })),
    );
    return { kind: 'answers', answered: answers.map((a) => a.id) };
  }

  private inScope(key: string): boolean {
    const prefix = this.options.slice === undefined ? undefined : `slice:${this.options.slice.id}/`;
    return prefix === undefined ? !key.startsWith('slice:') : key.startsWith(prefix);
  }

  private async plan(): Promise<LoopObservation> {
    const planned = this.options.ports.plan === undefined ? [] : await this.options.ports.plan();
    const slices = planned.filter((slice) => slice.id !== INTEGRATION);
    if (slices.length > 1) {
      // The decomposer's plan as given: its slices, then its integration pass with the cross-slice chains.
      const integration = planned.find((slice) => slice.id === INTEGRATION);
      const known = new Set(this.ledger.subGoals.map((goal) => goal.id));
      const added = planned
        .filter((slice) => !known.has(slice.id))
        .map((slice) => ({
          id: slice.id,
          slice: { constructs: [...slice.constructs] },
          dependsOn: [...slice.dependsOn],
          status: 'pending' as const,
          report: null,
        }));
      const at = this.now().toISOString();
      const chains = (integration?.chains ?? []).map((chain) => [...chain]);
      await this.persist(
        {
          ...this.ledger,
          subGoals: [...this.ledger.subGoals, ...added],
          modeState: { ...specRecord(this.ledger), plan: { integrationChains: chains } },
        },
        [
          {
            type: 'note',
            at,
            tick: this.state.tick,
            message: `goal split into ${String(slices.length)} slices${integration === undefined ? '' : ` plus the integration pass over ${String(chains.length)} chain(s)`}`,
            data: { slices: slices.map((s) => s.id), chains },
          },
        ],
      );
    }
    return { kind: 'planned', slices: slices.length };
  }

  /** The convergence gate of this loop (or of the whole decomposed run): the witness, then what it routes. */
  private async witness(): Promise<LoopObservation> {
    const step = await runWitnessStep({
      ports: this.options.ports,
      ledger: this.ledger,
      state: this.state,
      config: this.options.config,
      ...(this.options.slice === undefined ? {} : { slice: this.options.slice.id }),
      integrationId: INTEGRATION,
      signal: this.options.signal,
      at: this.now(),
    });
    await this.persist(step.ledger, step.events);
    this.progress({ kind: 'marker', text: `${this.slicePrefix()}${step.observation.summary}` });
    await this.writeTrace();
    return step.observation;
  }

  /**
   * After a tick is recorded: the run's trace file is rewritten, and a flat tick is said out loud at once (upstream
   * §13: `⚠ tick 4 · no progress — …`), long before the no-progress cap stops the run.
   */
  private async afterTick(): Promise<void> {
    await this.writeTrace();
    const slice = this.options.slice;
    const entries = loopTrace(this.state, this.ledger.intents, {
      prefix: slice === undefined ? '' : `slice:${slice.id}/`,
    });
    const warning = stallWarning(entries, this.options.config.stallWarningTicks ?? 1);
    if (warning === undefined || this.state.terminal?.state === 'converged') return;
    const text = slice === undefined ? warning : `[${slice.id}] ${warning}`;
    this.progress({ kind: 'marker', text });
    await this.persist(this.ledger, [
      {
        type: 'note',
        at: this.now().toISOString(),
        tick: this.state.tick,
        message: text,
        data: { stall: true },
      },
    ]);
  }

  /** Rewrites `.allium-loop/<slug>.trace.jsonl` from the ledger; a failure to write it is said, never fatal. */
  private async writeTrace(): Promise<void> {
    const write = this.options.ports.writeTrace;
    if (write === undefined) return;
    await write(renderTrace(runTrace(this.ledger))).catch((error: unknown) => {
      this.progress({
        kind: 'marker',
        text: `trace not written: ${error instanceof Error ? error.message : String(error)}`,
      });
    });
  }

  /**
   * Runs each slice not yet converged as its own loop, in plan order (or, with `parallel`, at once in worktrees,
   * merged back in plan order), then the integration pass.
   */
  private async runSlices(): Promise<LoopObservation> {
    const parallel = this.options.parallel;
    // At once with N > 1, and always to finish a wave that was started at once (its slices' work is in commits).
    const started = specRecord(this.ledger).parallel !== undefined;
    if (parallel !== undefined && (parallel.concurrency > 1 || started) && this.options.slice === undefined) {
      const terminal = await this.runWave(parallel);
      if (terminal !== undefined) return { kind: 'slices_done', terminal };
    }
    for (const goal of this.ledger.subGoals) {
      if (goal.status === 'converged') continue;
      const terminal = await this.runSlice(goal);
      if (terminal !== undefined) return { kind: 'slices_done', terminal };
    }
    return this.rollUp();
  }

  /** The slices at once, in worktrees (`runSlicesAtOnce`); the wave's spend joins the run's. */
  private async runWave(parallel: ParallelSlices): Promise<SlicesEnd | undefined> {
    const before = this.ledger.spent;
    const wave = await runSlicesAtOnce({
      parallel,
      options: this.options,
      ledger: this.ledger,
      sliceConfig: {
        ...this.options.config,
        entry: 'weed',
        decompose: false,
        startWithPropagate: true,
      },
      elapsedMs: () => this.elapsed(),
      runLoop,
      now: () => this.now(),
      progress: (text) => this.progress({ kind: 'marker', text }),
      adopt: (ledger) => {
        this.ledger = ledger;
        this.record.adopt(ledger);
      },
    });
    this.ledger = wave.ledger;
    this.record.adopt(wave.ledger);
    this.state = {
      ...this.state,
      spentUsd: this.state.spentUsd + (wave.ledger.spent.usd ?? 0) - (before.usd ?? 0),
      agentCalls: this.state.agentCalls + wave.ledger.spent.agentCalls - before.agentCalls,
    };
    return wave.terminal;
  }

  /**
   * One slice as a nested loop on the same ledger, with what is left of the budget; its spend joins the run's.
   * Returns the run's end when the slice did not converge.
   */
  private async runSlice(goal: Ledger['subGoals'][number]): Promise<SlicesEnd | undefined> {
    const slice: SliceFocus = {
      id: goal.id,
      constructs: goal.slice.constructs,
      integration: goal.id === INTEGRATION,
      ...(goal.id === INTEGRATION ? { chains: integrationChains(this.ledger) } : {}),
    };
    const budget = this.options.config.caps.budgetUsd;
    const config: LoopConfig = {
      ...this.options.config,
      entry: 'weed',
      decompose: false,
      startWithPropagate: true,
      caps: {
        ...this.options.config.caps,
        ...(budget === undefined ? {} : { budgetUsd: Math.max(0, budget - this.state.spentUsd) }),
      },
    };
    const nested = new LoopDriver({ ...this.options, ledger: this.ledger, config, slice });
    this.ledger = await nested.run();
    this.record.adopt(this.ledger);
    const state = readLoopState(this.ledger, goal.id);
    this.state = {
      ...this.state,
      spentUsd: this.state.spentUsd + (state?.spentUsd ?? 0),
      agentCalls: this.state.agentCalls + (state?.agentCalls ?? 0),
    };
    const terminal = state?.terminal;
    if (terminal?.state === 'converged') return undefined;
    return {
      state: terminal?.state ?? 'failed',
      reason: `slice ${goal.id}: ${terminal?.reason ?? 'ended without a verdict'}`,
    };
  }

  /** The decomposer's roll-up decides and records the outcome of the decomposed goal. */
  private async rollUp(): Promise<LoopObservation> {
    const rolled = rollUpSlices(this.ledger, (id) => readLoopState(this.ledger, id));
    await this.persist(this.ledger, [
      {
        type: 'note',
        at: this.now().toISOString(),
        tick: this.state.tick,
        message: `roll-up: ${rolled.status}, ${String(rolled.totals.converged)}/${String(rolled.totals.slices)} converged over ${String(rolled.totals.ticks)} tick(s)`,
        data: JSON.parse(JSON.stringify(rolled)) as Record<string, unknown>,
      },
    ]);
    return rolled.converged
      ? { kind: 'slices_done' }
      : { kind: 'slices_done', terminal: { state: 'failed', reason: `roll-up: ${rolled.status}` } };
  }

  /** Records the working tree under `tick-<n>` (or, with `label`, under that name, replaced each time). */
  private async checkpoint(ledger: Ledger, tick: number, label?: string): Promise<Ledger> {
    const slice = this.options.slice?.id.replace(/[^\w.-]+/g, '-');
    const local = label ?? `tick-${String(tick)}`;
    const name = slice === undefined ? local : `${slice}/${local}`;
    // A tick's checkpoint reuses the tree its measurement hashed (weed, which follows, does not edit files).
    const measured = this.lastMeasure?.git;
    const known =
      label === undefined && measured !== undefined && measured.tree !== null
        ? { head: measured.head, tree: measured.tree }
        : undefined;
    const made = await this.options.ports.checkpoint?.(name, known).catch(() => undefined);
    if (made === undefined) return ledger;
    const entry = { tick, ref: made.ref, object: made.object, at: this.now().toISOString() };
    return { ...ledger, checkpoints: [...ledger.checkpoints.filter((c) => c.ref !== made.ref), entry] };
  }

  private async persist(ledger: Ledger, events: readonly JournalEvent[]): Promise<void> {
    await this.record.persist(ledger, events);
    this.ledger = ledger;
  }

  private progress(progress: LoopProgress): void {
    this.options.onProgress?.(progress);
  }

  private now(): Date {
    return this.record.now();
  }

  private elapsed(): number {
    return this.record.elapsedMs();
  }
}

/** The id of the integration pass in `subGoals` (the decomposer's). */
export const INTEGRATION = INTEGRATION_ID;

/** The integration pass's chains, as the plan recorded them. */
function integrationChains(ledger: Ledger): string[][] {
  return (specRecord(ledger).plan?.integrationChains ?? []).map((chain) => [...chain]);
}

function requestFromIntent(intent: Intent, signal: AbortSignal): PhaseRequest {
  const focus = (intent.data['focus'] ?? {}) as PhaseRequest['focus'];
  const budget = intent.data['budgetUsd'];
  return {
    phase: intent.phase as LoopPhase,
    focus,
    tick: intent.tick,
    key: intent.key,
    ...(typeof budget === 'number' ? { budgetUsd: budget } : {}),
    signal,
  };
}

import { createHash } from 'node:crypto';
import type { VerifyModeState } from '@allium-loop/ledger';
import type { OpenTick, TickEdits } from './climb-tick.js';
import type { ModeStop, TickMeasure } from './mode-context.js';
import { modeStall } from './mode-stall.js';
import { isImprovement, parseScore, reachesTarget } from './parse-score.js';
import { outputTail, type UserCommandResult } from './run-user-command.js';
import { describeDelta, formatScore, verifyPrompt } from './verify-report.js';

/**
 * The `--verify` loop (with hill-climb) as a pure program, like `decide` for the spec loop and `decideStateFile` for
 * `--state-file`: the driver (`runVerifyMode`) carries out each action through its effects (the agent call, the
 * user's command, git checkpoints, reverts and refs, the ledger) and feeds back what it saw; every policy decision
 * — when the baseline already converges, what a tick's measurement means, which tick is kept or reverted, what is
 * rolled back, when the branch is reset to the recorded revision, how long to wait, when the run stops and under
 * which `/loop` name — is made here, without I/O.
 */

/** One tick of a verify run, as the ledger and the summary table keep it. */
export type VerifyTickRecord = VerifyModeState['ticks'][number];

/** The names `/loop` users script against, printed beside our own terminal state in `--json`. */
export type LoopExitName = 'CONVERGED' | 'EXHAUSTED';

/** The fields of a measurement the program reads (the driver's `runUserCommand` result). */
export type CommandRun = Pick<
  UserCommandResult,
  'exitCode' | 'timedOut' | 'aborted' | 'durationMs' | 'output'
>;

/** A tick under way: what the driver has reported of it so far. */
export interface VerifyTurn {
  readonly tick: number;
  readonly outcome?: string;
  readonly edits?: TickEdits;
  readonly run?: CommandRun;
  readonly head?: string | null;
  readonly best?: VerifyModeState['best'];
  readonly kept?: boolean | null;
  readonly reverted?: boolean;
  /** Tokens the tick's agent call used, when it reported them. */
  readonly tokens?: number | undefined;
}

/** The program's state: the mode state kept in the ledger, where the run is, and what it is doing. */
export interface VerifyProgramState {
  readonly goal: string;
  readonly noProgressTicks: number;
  readonly record: VerifyModeState;
  /** `resume`: settling a resumed run; `tick`: inside a tick; `stop`: ending the run. */
  readonly phase: 'start' | 'resume' | 'baseline' | 'between' | 'tick' | 'stop';
  readonly turn?: VerifyTurn | undefined;
  /** Why the run ends, while the rollback and ref checks that precede the terminal record run. */
  readonly stopping?: ModeStop;
  /** The tick the interval is waited before (set when a tick of this process was recorded). */
  readonly waitBefore?: number | undefined;
}

/** What the driver observed after an action. */
export type VerifyObservation =
  /**
   * The run starts or resumes: HEAD now, and the revision the ledger's last verdict recorded (for ledgers written
   * before each tick kept its own).
   */
  | { readonly kind: 'opened'; readonly head: string | null; readonly verdictHead?: string | null }
  /** The baseline measurement, HEAD, the command's fingerprint, and (climbing) the first checkpoint. */
  | {
      readonly kind: 'baselined';
      readonly run: CommandRun;
      readonly head: string | null;
      readonly fingerprint: Record<string, unknown>;
      /** The tick-0 checkpoint's commit; `null` outside a git work tree; absent when not climbing. */
      readonly checkpoint?: string | null;
    }
  /** A write (`save_baseline`, `save_state`) is done. */
  | { readonly kind: 'saved' }
  /** The branch was reset to the recorded revision (`reset`), or could not be (`missing`: the commit is gone). */
  | { readonly kind: 'head_reset'; readonly outcome: 'reset' | 'missing' }
  /** An open tick was rolled back. */
  | { readonly kind: 'rolled_back' }
  /** The run's refs were checked against the ledger (and put back where moved). */
  | { readonly kind: 'refs_checked' }
  /** The caps at a tick boundary: the stop of the first cap reached, if any; the wall clock left (none: no cap). */
  | { readonly kind: 'capped'; readonly stop: ModeStop | undefined; readonly wallClockLeftMs?: number }
  /** The tick counter moved in the ledger. */
  | { readonly kind: 'tick_begun'; readonly tick: number }
  /** The tree was snapshotted before the agent's call (`null`: not in a git work tree, nothing to roll back to). */
  | { readonly kind: 'tick_opened'; readonly open: OpenTick | null }
  /** The agent step ended with `outcome`, having used `tokens` (when the agent reported them). */
  | { readonly kind: 'stepped'; readonly outcome: string; readonly tokens?: number | undefined }
  /** The agent call was stopped (cancel, wall clock, budget, a port failure). */
  | { readonly kind: 'step_stopped'; readonly stop: ModeStop }
  /** The paths the agent touched. */
  | { readonly kind: 'edits_collected'; readonly edits: TickEdits }
  /** The command's fingerprint checked: the stop when the agent edited what the command runs. */
  | { readonly kind: 'guarded'; readonly stop: ModeStop | undefined }
  /** The engine ran the command itself; HEAD after it. */
  | { readonly kind: 'measured'; readonly run: CommandRun; readonly head: string | null }
  /** A checkpoint of the tick was made (`undefined`: git could not). */
  | { readonly kind: 'checkpoint_kept'; readonly commit: string | undefined }
  /** The agent's paths were reverted. */
  | { readonly kind: 'reverted' }
  /** The tick's record is saved. */
  | { readonly kind: 'recorded' }
  /** The wait between ticks ended (its end or Ctrl-C: the caps say which). */
  | { readonly kind: 'waited' };

/** An extension event `x-verify.<name>` for the journal, stamped by the driver. */
export interface VerifyEvent {
  readonly name: string;
  readonly data: Record<string, unknown>;
}

/** What the program asks the driver to do next. */
export type VerifyAction =
  /** Run the command for the baseline, read HEAD, fingerprint the command, and (`checkpoint`) keep tick 0. */
  | { readonly kind: 'baseline'; readonly checkpoint: boolean }
  /** Save the framed state (with the tick-0 checkpoint, when one was made) and journal the baseline. */
  | {
      readonly kind: 'save_baseline';
      readonly record: VerifyModeState;
      readonly checkpoint: string | null;
      readonly event: VerifyEvent;
      readonly line: string;
    }
  /**
   * The `/loop` restart rule: HEAD is not the revision the run recorded. Keep HEAD reachable under `keep`'s ref,
   * then move the branch (only the branch: index and working tree stay) back to `to`.
   */
  | { readonly kind: 'reset_head'; readonly from: string; readonly to: string }
  /** Roll back the open tick (its paths back to the tree it started from, `best` back, its checkpoint dropped). */
  | { readonly kind: 'roll_back'; readonly open: OpenTick; readonly why: 'interrupted' | 'stopped' }
  /** Check the run's refs against the ledger (`best`, every checkpoint, `pending` while a tick is open). */
  | { readonly kind: 'check_refs'; readonly best: string | null; readonly open: OpenTick | null }
  /** Check the caps (and cancellation) before a new tick. */
  | { readonly kind: 'check_caps' }
  /** Move the tick counter. */
  | { readonly kind: 'begin_tick' }
  /**
   * Snapshot the tree before the agent's call (`…/pending`) and open the tick; `best` is the commit a climb tick is
   * judged against (absent for plain verify, whose open tick only serves to roll back an interrupted step).
   */
  | { readonly kind: 'open_tick'; readonly tick: number; readonly best?: string }
  /** Save the mode state (an opened tick) in the ledger. */
  | { readonly kind: 'save_state'; readonly record: VerifyModeState }
  /** Call the agent once with `prompt`. */
  | { readonly kind: 'agent_step'; readonly tick: number; readonly prompt: string }
  /** Snapshot the tree after the call and name the paths the agent touched. */
  | { readonly kind: 'collect_edits'; readonly open: OpenTick }
  /** Check that the agent did not edit the command or what it runs. */
  | { readonly kind: 'guard_command' }
  /** Run the command (the engine, never the agent) and read HEAD. */
  | { readonly kind: 'measure'; readonly tick: number }
  /** Keep the tree as `…/tick-<n>` and move `…/best` to it. */
  | { readonly kind: 'keep_checkpoint'; readonly tick: number }
  /** Put the agent's paths back as they were when the tick opened (kept under `…/reverted-<n>`). */
  | { readonly kind: 'revert'; readonly open: OpenTick; readonly edits: TickEdits }
  /**
   * Save the judged state and the tick's verdict, journal its events (then `x-verify.tick` for `entry`, with
   * `outputTail`), close an open climb tick (`close`) and show the tick's line.
   */
  | {
      readonly kind: 'record_tick';
      readonly record: VerifyModeState;
      readonly entry: VerifyTickRecord;
      readonly measure: TickMeasure;
      readonly events: readonly VerifyEvent[];
      readonly outputTail: string;
      readonly close: boolean;
    }
  /** Wait `ms` before the next tick (cut short by Ctrl-C); `line` says so. */
  | { readonly kind: 'wait'; readonly ms: number; readonly line: string }
  /** End the run; `summary` when the summary table goes to the journal; `loop` is the `/loop` exit name. */
  | {
      readonly kind: 'finish';
      readonly stop: ModeStop;
      readonly summary: boolean;
      readonly loop: LoopExitName | undefined;
    };

export interface VerifyDecision {
  readonly state: VerifyProgramState;
  readonly action: VerifyAction;
}

/** The program's first state for a run (or a resume, with the mode state the ledger kept). */
export function initialVerifyProgram(
  goal: string,
  config: VerifyModeState['config'],
  noProgressTicks: number,
  record: VerifyModeState | undefined,
): VerifyProgramState {
  return {
    goal,
    noProgressTicks,
    phase: 'start',
    record: record ?? { config, baseline: null, best: null, ticks: [], lastOutput: '', fingerprint: null },
  };
}

/** The `/loop` name of a terminal state: `CONVERGED`, or `EXHAUSTED` when a bound ended the run. */
export function loopExitName(state: ModeStop['state']): LoopExitName | undefined {
  if (state === 'converged') return 'CONVERGED';
  if (['max_ticks', 'no_progress', 'budget_exhausted', 'timed_out'].includes(state)) return 'EXHAUSTED';
  return undefined;
}

/** The revision the run last recorded: the last tick's, else the last verdict's, else the baseline's. */
export function recordedRevision(record: VerifyModeState, verdictHead?: string | null): string | null {
  const tick = record.ticks.at(-1);
  if (tick?.head !== undefined) return tick.head;
  return verdictHead ?? record.baseline?.head ?? null;
}

/** Pure: the next action for `observation`. */
export function decideVerify(state: VerifyProgramState, observation: VerifyObservation): VerifyDecision {
  switch (observation.kind) {
    case 'opened':
      return opened(state, observation);
    case 'baselined':
      return baselined(state, observation);
    case 'saved':
      return saved(state);
    case 'head_reset':
      return settleClimb(state);
    case 'rolled_back':
      return {
        state: { ...state, record: { ...state.record, pending: null } },
        action: { kind: 'check_refs', best: state.record.best?.commit ?? null, open: null },
      };
    case 'refs_checked':
      return refsChecked(state);
    case 'capped': {
      const stop = observation.stop ?? noProgress(state.record, state.noProgressTicks);
      if (stop !== undefined) return stopWith(state, stop);
      return capsPassed({ ...state, phase: 'between' }, observation.wallClockLeftMs);
    }
    case 'tick_begun':
      return tickBegun(state, observation.tick);
    case 'tick_opened': {
      if (observation.open === null) return { state, action: { kind: 'agent_step', ...stepOf(state) } };
      const record = { ...state.record, pending: observation.open };
      return { state: { ...state, record }, action: { kind: 'save_state', record } };
    }
    case 'stepped': {
      const turn = { ...turnOf(state), outcome: observation.outcome, tokens: observation.tokens };
      // Only a climb judges the agent's paths (to revert them); a plain tick's edits always stay once measured.
      const open = state.record.pending;
      return {
        state: { ...state, turn },
        action:
          open == null || !climbing(state) ? { kind: 'guard_command' } : { kind: 'collect_edits', open },
      };
    }
    case 'step_stopped':
    case 'guarded':
      return observation.stop === undefined
        ? { state, action: { kind: 'measure', tick: turnOf(state).tick } }
        : stopWith(state, observation.stop);
    case 'edits_collected':
      return {
        state: { ...state, turn: { ...turnOf(state), edits: observation.edits } },
        action: { kind: 'guard_command' },
      };
    case 'measured':
      return measured(state, observation.run, observation.head);
    case 'checkpoint_kept': {
      const turn = turnOf(state);
      const best = {
        score: scoreOf(state, turn.run) ?? null,
        tick: turn.tick,
        commit: observation.commit ?? null,
      };
      return recordTick({ ...state, turn: { ...turn, best, kept: true } });
    }
    case 'reverted':
      return recordTick({ ...state, turn: { ...turnOf(state), kept: false, reverted: true } });
    case 'recorded':
      return recorded(state);
    case 'waited':
      return { state, action: { kind: 'check_caps' } };
  }
}

function climbing(state: VerifyProgramState): boolean {
  return state.record.config.hillclimb !== undefined;
}

function turnOf(state: VerifyProgramState): VerifyTurn {
  return state.turn ?? { tick: 0 };
}

function scoreOf(state: VerifyProgramState, run: CommandRun | undefined): number | undefined {
  const climb = state.record.config.hillclimb;
  return climb === undefined || run === undefined ? undefined : parseScore(run.output, climb.score);
}

/**
 * A fresh run measures its baseline. A resumed one first applies `/loop`'s restart rule — HEAD moved since the run
 * recorded it: the branch goes back to the recorded revision, the new HEAD kept under a ref — then settles a climb.
 */
function opened(
  state: VerifyProgramState,
  observation: Extract<VerifyObservation, { kind: 'opened' }>,
): VerifyDecision {
  if (state.record.baseline === null)
    return {
      state: { ...state, phase: 'baseline' },
      action: { kind: 'baseline', checkpoint: climbing(state) },
    };
  const resuming = { ...state, phase: 'resume' as const };
  const recorded = recordedRevision(state.record, observation.verdictHead);
  if (recorded !== null && observation.head !== null && observation.head !== recorded)
    return {
      state: resuming,
      action: { kind: 'reset_head', from: observation.head, to: recorded },
    };
  return settleClimb(resuming);
}

/**
 * On resume: a tick a crash left open (plain verify or climb) is rolled back, then a climb's refs are checked;
 * plain verify then goes on at once.
 */
function settleClimb(state: VerifyProgramState): VerifyDecision {
  const open = state.record.pending;
  if (open != null) return { state, action: { kind: 'roll_back', open, why: 'interrupted' } };
  if (!climbing(state) || state.record.best?.commit == null)
    return { state: { ...state, phase: 'between' }, action: { kind: 'check_caps' } };
  return { state, action: { kind: 'check_refs', best: state.record.best.commit, open: null } };
}

function refsChecked(state: VerifyProgramState): VerifyDecision {
  if (state.phase === 'stop' && state.stopping !== undefined) return finish(state, state.stopping);
  if (state.phase === 'tick') return judge(state);
  return { state: { ...state, phase: 'between' }, action: { kind: 'check_caps' } };
}

function baselined(
  state: VerifyProgramState,
  observation: Extract<VerifyObservation, { kind: 'baselined' }>,
): VerifyDecision {
  const { run, head } = observation;
  if (run.aborted) return finish(state, cancelled());
  const climb = state.record.config.hillclimb;
  const score = scoreOf(state, run) ?? null;
  const checkpoint = observation.checkpoint ?? null;
  const record: VerifyModeState = {
    ...state.record,
    baseline: { exitCode: run.exitCode, score, head, outputTail: outputTail(run.output, 500) },
    best: climb === undefined ? null : { score, tick: 0, commit: checkpoint },
    lastOutput: outputTail(run.output),
    fingerprint: observation.fingerprint,
  };
  return {
    state: { ...state, record },
    action: {
      kind: 'save_baseline',
      record,
      checkpoint,
      event: {
        name: 'baseline',
        data: { exitCode: run.exitCode, score, head, durationMs: run.durationMs },
      },
      line: `baseline: exit ${String(run.exitCode)}${climb === undefined ? '' : ` · score ${formatScore(score)}`}${head === null ? '' : ` · at ${head.slice(0, 12)}`}`,
    },
  };
}

/** After a write: the baseline's own stops (outside git, already passing, target reached), or the next step. */
function saved(state: VerifyProgramState): VerifyDecision {
  if (state.phase === 'between') return { state, action: { kind: 'agent_step', ...stepOf(state) } };
  if (state.phase !== 'baseline') return { state, action: { kind: 'check_caps' } };
  const { baseline, best, config } = state.record;
  const climb = config.hillclimb;
  const next = { ...state, phase: 'between' as const };
  if (climb !== undefined && best?.commit == null)
    return finish(next, {
      state: 'failed',
      reason: 'not_a_git_repository',
      detail: 'hill-climb reverts through git checkpoints, and the project is not in a git work tree',
    });
  if (climb === undefined && baseline?.exitCode === 0)
    return finish(next, {
      state: 'converged',
      reason: 'already_passing',
      detail: 'the verify command already exits 0',
    });
  if (climb !== undefined && reachesTarget(baseline?.score ?? null, climb.target, climb.direction))
    return finish(next, {
      state: 'converged',
      reason: 'target_reached',
      detail: `score ${formatScore(baseline?.score ?? null)} already reaches the target`,
    });
  return { state: next, action: { kind: 'check_caps' } };
}

function stepOf(state: VerifyProgramState): { tick: number; prompt: string } {
  return { tick: turnOf(state).tick, prompt: verifyPrompt(state.goal, state.record) };
}

/**
 * Every tick opens before the agent's call: a snapshot to roll an interrupted step back to, and for a climb also
 * the tree its score is judged against.
 */
function tickBegun(state: VerifyProgramState, tick: number): VerifyDecision {
  const next = { ...state, phase: 'between' as const, turn: { tick } };
  const best = state.record.best?.commit;
  if (!climbing(state)) return { state: next, action: { kind: 'open_tick', tick } };
  if (best != null) return { state: next, action: { kind: 'open_tick', tick, best } };
  return { state: next, action: { kind: 'agent_step', ...stepOf(next) } };
}

function measured(state: VerifyProgramState, run: CommandRun, head: string | null): VerifyDecision {
  if (run.aborted) return stopWith(state, cancelled());
  const next = { ...state, phase: 'tick' as const, turn: { ...turnOf(state), run, head } };
  const open = state.record.pending;
  if (open != null)
    return { state: next, action: { kind: 'check_refs', best: state.record.best?.commit ?? null, open } };
  return judge(next);
}

/**
 * Hill-climb: a tick whose score beats the best becomes the new checkpoint; one that does not (or prints no score)
 * has the agent's paths reverted. Plain verify records the tick as measured.
 */
function judge(state: VerifyProgramState): VerifyDecision {
  const climb = state.record.config.hillclimb;
  const turn = turnOf(state);
  if (climb === undefined) return recordTick({ ...state, turn: { ...turn, kept: null } });
  if (isImprovement(scoreOf(state, turn.run), state.record.best?.score ?? null, climb.direction))
    return { state, action: { kind: 'keep_checkpoint', tick: turn.tick } };
  const open = state.record.pending;
  if (state.record.best?.commit != null && open != null && turn.edits !== undefined)
    return { state, action: { kind: 'revert', open, edits: turn.edits } };
  return recordTick({ ...state, turn: { ...turn, kept: false } });
}

function recordTick(state: VerifyProgramState): VerifyDecision {
  const climb = state.record.config.hillclimb;
  const turn = turnOf(state);
  const run = turn.run ?? { exitCode: null, timedOut: false, aborted: false, durationMs: 0, output: '' };
  const last = state.record.ticks.at(-1) ?? state.record.baseline;
  // A climb compares with the best kept tree (what this tick started from), not with a reverted tick.
  const previous = {
    exitCode: last?.exitCode ?? null,
    score: state.record.best?.score ?? last?.score ?? null,
  };
  const score = scoreOf(state, run) ?? null;
  const best = turn.best ?? state.record.best;
  const entry: VerifyTickRecord = {
    tick: turn.tick,
    agentOutcome: turn.outcome ?? 'unknown',
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    score,
    kept: turn.kept ?? null,
    delta: describeDelta(previous, run.exitCode, score, climb !== undefined),
    outputHash: createHash('sha256')
      .update(`${String(run.exitCode)}\n${run.output}`)
      .digest('hex')
      .slice(0, 16),
    head: turn.head ?? null,
    ...(turn.tokens === undefined ? {} : { tokens: turn.tokens }),
  };
  const record: VerifyModeState = {
    ...state.record,
    ...(state.record.pending === undefined ? {} : { pending: null }),
    best,
    ticks: [...state.record.ticks, entry],
    lastOutput: outputTail(run.output),
  };
  const events: VerifyEvent[] = [];
  if (turn.reverted === true && state.record.best?.commit != null)
    events.push({
      name: 'reverted',
      data: {
        to: state.record.best.commit,
        bestTick: state.record.best.tick,
        score,
        best: state.record.best.score,
        paths: turn.edits?.paths ?? [],
      },
    });
  const kept = entry.kept;
  const converged =
    climb === undefined
      ? run.exitCode === 0
      : reachesTarget(best?.score ?? null, climb.target, climb.direction);
  return {
    state: { ...state, record },
    action: {
      kind: 'record_tick',
      record,
      measure: {
        tick: turn.tick,
        measured: `verify ${entry.timedOut ? 'timed out' : `exit ${String(entry.exitCode)}`}${kept === null ? '' : ` · score ${String(entry.score ?? '-')} · ${kept ? 'kept' : 'reverted'}`}`,
        fingerprint: `verify ${entry.outputHash}`,
        converged,
        head: entry.head ?? null,
      },
      entry,
      events,
      outputTail: outputTail(run.output, 500),
      close: state.record.pending != null,
    },
  };
}

/** After a recorded tick: converged ends the run; otherwise the caps, then the interval before the next tick. */
function recorded(state: VerifyProgramState): VerifyDecision {
  const climb = state.record.config.hillclimb;
  const entry = state.record.ticks.at(-1);
  const interval = state.record.config.intervalMs;
  const next = {
    ...state,
    phase: 'between' as const,
    turn: undefined,
    waitBefore: interval > 0 && entry !== undefined ? entry.tick + 1 : undefined,
  };
  if (entry !== undefined) {
    if (climb === undefined && entry.exitCode === 0)
      return stopWith(next, {
        state: 'converged',
        reason: 'command_passed',
        detail: `the verify command exits 0 after tick ${String(entry.tick)}`,
      });
    const best = state.record.best?.score ?? null;
    if (climb !== undefined && reachesTarget(best, climb.target, climb.direction))
      return stopWith(next, {
        state: 'converged',
        reason: 'target_reached',
        detail: `best score ${formatScore(best)} reaches the target`,
      });
  }
  return { state: next, action: { kind: 'check_caps' } };
}

/**
 * No cap stops the run: the next tick begins, after the interval when a tick of this process came before it. The
 * wait never runs past the wall clock (the caps, checked again after it, end the run then).
 */
function capsPassed(state: VerifyProgramState, wallClockLeftMs: number | undefined): VerifyDecision {
  const tick = state.waitBefore;
  if (tick === undefined) return { state, action: { kind: 'begin_tick' } };
  const interval = state.record.config.intervalMs;
  const ms = wallClockLeftMs === undefined ? interval : Math.max(0, Math.min(interval, wallClockLeftMs));
  return {
    state: { ...state, waitBefore: undefined },
    action: {
      kind: 'wait',
      ms,
      line:
        ms < interval
          ? `waiting ${seconds(ms)} before tick ${String(tick)} (the wall-clock cap ends the run then)`
          : `waiting ${seconds(ms)} before tick ${String(tick)}`,
    },
  };
}

function seconds(ms: number): string {
  return `${String(Math.round(ms / 100) / 10)} s`;
}

/**
 * The evaluator's stall rules ({@link modeStall}) over the ticks' measurements: a tick's state is its `outputHash`,
 * the command's exit code and whole output. Plain verify: unchanged for `limit` ticks is no progress (as before).
 * Hill-climb: the score is read from that output, so a kept tick (a better score) always moves it, and a reverted
 * tick moves it only when its attempt measured differently from the tick before; the tree itself is back at the
 * best after every revert, so the measurements are what moves. A second return to the measurement of two ticks
 * before (A→B→A) stops the run, and so do tokens climbing while the measurement stays the same.
 */
function noProgress(record: VerifyModeState, limit: number): ModeStop | undefined {
  return modeStall(
    record.ticks.map((t) => ({ fingerprint: t.outputHash, tokens: t.tokens })),
    limit,
    {
      unchanged: `the command's exit code and output did not change for ${String(limit)} ticks`,
      subject: "the command's output",
    },
  );
}

/**
 * Ends the run with `stop`. A tick still open is first rolled back (its unmeasured edits never stay in the tree,
 * and a climb's never reach a checkpoint); a climb then checks its refs against the ledger before the terminal
 * record.
 */
function stopWith(state: VerifyProgramState, stop: ModeStop): VerifyDecision {
  const stopping = { ...state, phase: 'stop' as const, stopping: stop };
  const open = state.record.pending;
  if (open != null) return { state: stopping, action: { kind: 'roll_back', open, why: 'stopped' } };
  if (!climbing(state) || state.record.best?.commit == null) return finish(stopping, stop);
  return { state: stopping, action: { kind: 'check_refs', best: state.record.best.commit, open: null } };
}

function finish(state: VerifyProgramState, stop: ModeStop): VerifyDecision {
  return { state, action: { kind: 'finish', stop, summary: true, loop: loopExitName(stop.state) } };
}

function cancelled(): ModeStop {
  return { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' };
}

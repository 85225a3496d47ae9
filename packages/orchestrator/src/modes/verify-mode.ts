import { createHash } from 'node:crypto';
import type { Ledger, VerifyModeConfig, VerifyModeState } from '@allium-loop/ledger';
import {
  fingerprintCommand,
  guardCommand,
  readFingerprint,
  storeFingerprint,
} from './command-fingerprint.js';
import { gitHead } from '../project/git.js';
import { createCheckpoint, pointRef, type CheckpointScope } from './git-checkpoint.js';
import {
  closeTick,
  guardRunRefs,
  noticeHeadMoved,
  openTick,
  revertTick,
  rollBackOpenTick,
  tickEdits,
  type TickEdits,
} from './climb-tick.js';
import type { ModeContext, ModeStop } from './mode-context.js';
import { loopRecord, ModeSession } from './mode-session.js';
import { isImprovement, parseScore, reachesTarget } from './parse-score.js';
import { outputTail, runUserCommand, type UserCommandResult } from './run-user-command.js';
import { describeDelta, formatScore, formatVerifySummary, tickLine, verifyPrompt } from './verify-report.js';
import { abortableSleep } from '../driver/wait-for-rate-limit.js';

/** The configuration of a `--verify` run, kept in the ledger so a resume needs nothing else. */
export type { VerifyModeConfig, VerifyModeState } from '@allium-loop/ledger';

/** One tick of a verify run, as the summary table shows it. */
export type VerifyTickRecord = VerifyModeState['ticks'][number];

/**
 * The `--verify` loop. Frame: run the command once for a baseline and record the git revision (and, when
 * climbing, checkpoint the tree as the first best). Each tick: one agent step, then the engine runs the command
 * itself; exit 0 converges (hill-climb: the target score does), anything else is recorded with its delta and the
 * loop goes on after the interval, until a cap. Hill-climb ticks that do not improve the score are reverted to the
 * best checkpoint under `refs/allium-loop/<slug>/best`.
 */
export async function runVerifyMode(context: ModeContext, config: VerifyModeConfig): Promise<Ledger> {
  const session = new ModeSession(context, 'verify');
  await session.abandonPendingIntents();
  let state: VerifyModeState = loopRecord(session.ledger, 'verify').verify ?? {
    config,
    baseline: null,
    best: null,
    ticks: [],
    lastOutput: '',
    fingerprint: null,
  };
  const scope: CheckpointScope = { cwd: session.cwd, exclude: [session.stateDir] };
  if (state.baseline === null) {
    const framed = await frame(session, state, scope);
    if ('stop' in framed) return session.finish(framed.stop, [summaryEvent(session, framed.state)]);
    state = framed.state;
  } else {
    await noticeHeadMoved(session, session.ledger.verdicts.at(-1)?.git.head ?? state.baseline.head);
    state = await settleClimb(session, scope, state, 'interrupted');
  }
  // A run that stops inside a hill-climb tick rolls the tick back and checks its refs before its last record.
  const end = async (stop: ModeStop): Promise<Ledger> => {
    state = await settleClimb(session, scope, state, 'stopped');
    return session.finish(stop, [summaryEvent(session, state)]);
  };
  for (;;) {
    const stop = session.capReached() ?? noProgress(state, session.ledger.caps.noProgressTicks);
    if (stop !== undefined) return end(stop);
    const tick = await session.beginTick();
    if (tick > 1 && state.config.intervalMs > 0) {
      session.say(`waiting ${String(state.config.intervalMs / 1000)} s before tick ${String(tick)}`);
      await (context.sleep ?? abortableSleep)(state.config.intervalMs, session.signal);
      if (session.signal.aborted) return end(cancelled());
    }
    if (state.config.hillclimb !== undefined && state.best?.commit != null) {
      state = { ...state, pending: await openTick(scope, session.ledger.slug, tick, state.best.commit) };
      await saveVerifyState(session, state);
    }
    session.say(`→ tick ${String(tick)}: agent step`);
    const step = await session.callAgent('step', 'step', verifyPrompt(session.ledger.goal, state));
    if (step.kind === 'stop') return end(step.stop);
    const edits =
      state.pending == null ? undefined : await tickEdits(scope, session.ledger.slug, state.pending);
    const edited = await guardCommand(
      session,
      state.config.command,
      readFingerprint(state.fingerprint ?? {}),
    );
    if (edited !== undefined) return end(edited);
    session.say(`→ tick ${String(tick)}: ${state.config.command}`);
    const run = await measure(session, state.config.command);
    if (run.aborted) return end(cancelled());
    if (state.pending != null) await guardRunRefs(session, scope, state.best?.commit ?? null, state.pending);
    const outcome = await judgeTick(session, state, scope, tick, step.result.outcome, run, edits);
    state = outcome.state;
    const record = state.ticks.at(-1)!;
    await session.saveTick(
      { ...loopRecord(session.ledger, 'verify'), verify: state },
      {
        tick,
        measured: `verify ${record.timedOut ? 'timed out' : `exit ${String(record.exitCode)}`}${record.kept === null ? '' : ` · score ${String(record.score ?? '-')} · ${record.kept ? 'kept' : 'reverted'}`}`,
        fingerprint: `verify ${record.outputHash}`,
        converged: outcome.converged !== undefined,
        head: await gitHead(session.cwd),
      },
      outcome.events,
    );
    if (state.config.hillclimb !== undefined) await closeTick(scope, session.ledger.slug);
    session.say(outcome.line);
    if (outcome.converged) return end(outcome.converged);
  }
}

/** Saves the verify mode's state in the ledger. */
async function saveVerifyState(session: ModeSession, state: VerifyModeState): Promise<void> {
  await session.saveState({ ...loopRecord(session.ledger, 'verify'), verify: state });
}

/**
 * Hill-climb, on resume and when a run stops: a tick left open (a crash or a stop inside it) is rolled back so its
 * unscored edits never reach a checkpoint, and the run's refs are checked against the ledger.
 */
async function settleClimb(
  session: ModeSession,
  scope: CheckpointScope,
  state: VerifyModeState,
  why: 'interrupted' | 'stopped',
): Promise<VerifyModeState> {
  if (state.config.hillclimb === undefined || state.best?.commit == null) return state;
  let settled = state;
  if (state.pending != null) {
    await rollBackOpenTick(session, scope, state.pending, why);
    settled = { ...state, pending: null };
    await saveVerifyState(session, settled);
  }
  await guardRunRefs(session, scope, settled.best?.commit ?? null, null);
  return settled;
}

async function frame(
  session: ModeSession,
  initial: VerifyModeState,
  scope: CheckpointScope,
): Promise<{ state: VerifyModeState } | { state: VerifyModeState; stop: ModeStop }> {
  session.say(`→ baseline: ${initial.config.command}`);
  const run = await measure(session, initial.config.command);
  if (run.aborted) return { state: initial, stop: cancelled() };
  const climb = initial.config.hillclimb;
  const score = climb === undefined ? null : (parseScore(run.output, climb.score) ?? null);
  const head = await gitHead(session.cwd);
  const fingerprint = await fingerprintCommand(
    initial.config.command,
    session.cwd,
    session.env,
    session.ledger.slug,
  );
  const checkpoint = climb === undefined ? undefined : await keepCheckpoint(session, scope, 0);
  const state: VerifyModeState = {
    ...initial,
    baseline: { exitCode: run.exitCode, score, head, outputTail: outputTail(run.output, 500) },
    best: climb === undefined ? null : { score, tick: 0, commit: checkpoint?.commit ?? null },
    lastOutput: outputTail(run.output),
    fingerprint: storeFingerprint(fingerprint),
  };
  const checkpoints =
    checkpoint === undefined
      ? session.ledger.checkpoints
      : [...session.ledger.checkpoints, checkpointEntry(session, 0, checkpoint)];
  await session.persist({ ...session.ledger, checkpoints }, [
    session.event('baseline', { exitCode: run.exitCode, score, head, durationMs: run.durationMs }),
  ]);
  await session.saveState({ ...loopRecord(session.ledger, 'verify'), verify: state });
  session.say(
    `baseline: exit ${String(run.exitCode)}${climb === undefined ? '' : ` · score ${formatScore(score)}`}${head === null ? '' : ` · at ${head.slice(0, 12)}`}`,
  );
  if (climb !== undefined && checkpoint === undefined)
    return {
      state,
      stop: {
        state: 'failed',
        reason: 'not_a_git_repository',
        detail: `hill-climb reverts through git checkpoints, and ${session.cwd} is not in a git work tree`,
      },
    };
  if (climb === undefined && run.exitCode === 0)
    return {
      state,
      stop: { state: 'converged', reason: 'already_passing', detail: 'the verify command already exits 0' },
    };
  if (climb !== undefined && reachesTarget(score, climb.target, climb.direction))
    return {
      state,
      stop: {
        state: 'converged',
        reason: 'target_reached',
        detail: `score ${formatScore(score)} already reaches the target`,
      },
    };
  return { state };
}

async function measure(session: ModeSession, command: string): Promise<UserCommandResult> {
  return runUserCommand({
    command,
    cwd: session.cwd,
    env: session.env,
    timeoutMs: session.ledger.caps.testTimeoutMs,
    signal: session.signal,
  });
}

interface TickJudgement {
  readonly state: VerifyModeState;
  readonly events: ReturnType<ModeSession['event']>[];
  readonly line: string;
  readonly converged: ModeStop | undefined;
}

async function judgeTick(
  session: ModeSession,
  state: VerifyModeState,
  scope: CheckpointScope,
  tick: number,
  agentOutcome: string,
  run: UserCommandResult,
  edits: TickEdits | undefined,
): Promise<TickJudgement> {
  const climb = state.config.hillclimb;
  const last = state.ticks.at(-1) ?? state.baseline;
  // A climb compares with the best kept tree (what this tick started from), not with a reverted tick.
  const previous = { exitCode: last?.exitCode ?? null, score: state.best?.score ?? last?.score ?? null };
  const parsed = climb === undefined ? undefined : parseScore(run.output, climb.score);
  let best = state.best;
  let kept: boolean | null = null;
  const events: ReturnType<ModeSession['event']>[] = [];
  if (climb !== undefined) {
    kept = isImprovement(parsed, best?.score ?? null, climb.direction);
    if (kept) {
      const made = await keepCheckpoint(session, scope, tick);
      best = { score: parsed ?? null, tick, commit: made?.commit ?? null };
      if (made !== undefined)
        await session.persist({
          ...session.ledger,
          checkpoints: [...session.ledger.checkpoints, checkpointEntry(session, tick, made)],
        });
    } else if (best?.commit != null && state.pending != null && edits !== undefined) {
      // Only the paths the agent touched go back; the user's edits and logs elsewhere in the tree stay.
      await revertTick(scope, session.ledger.slug, state.pending, edits);
      events.push(
        session.event('reverted', {
          to: best.commit,
          bestTick: best.tick,
          score: parsed ?? null,
          best: best.score,
          paths: edits.paths,
        }),
      );
    }
  }
  const record: VerifyTickRecord = {
    tick,
    agentOutcome,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    durationMs: run.durationMs,
    score: parsed ?? null,
    kept,
    delta: describeDelta(previous, run.exitCode, parsed ?? null, climb !== undefined),
    outputHash: createHash('sha256')
      .update(`${String(run.exitCode)}\n${run.output}`)
      .digest('hex')
      .slice(0, 16),
  };
  const next: VerifyModeState = {
    ...state,
    ...(climb === undefined ? {} : { pending: null }),
    best,
    ticks: [...state.ticks, record],
    lastOutput: outputTail(run.output),
  };
  const line = tickLine(record, best, session.ledger);
  events.push(session.event('tick', { ...record, outputTail: outputTail(run.output, 500) }), {
    type: 'tick_recorded',
    at: new Date(session.now()).toISOString(),
    tick,
    line,
    usd: session.ledger.spent.usd,
  });
  const converged =
    climb === undefined
      ? run.exitCode === 0
        ? {
            state: 'converged' as const,
            reason: 'command_passed',
            detail: `the verify command exits 0 after tick ${String(tick)}`,
          }
        : undefined
      : reachesTarget(best?.score ?? null, climb.target, climb.direction)
        ? {
            state: 'converged' as const,
            reason: 'target_reached',
            detail: `best score ${formatScore(best?.score ?? null)} reaches the target`,
          }
        : undefined;
  return { state: next, events, line, converged };
}

/** Plain verify only: the command's exit code and output did not change for `limit` ticks in a row. */
function noProgress(state: VerifyModeState, limit: number): ModeStop | undefined {
  if (state.config.hillclimb !== undefined || state.ticks.length <= limit) return undefined;
  const recent = state.ticks.slice(-(limit + 1));
  if (!recent.every((t) => t.outputHash === recent[0]?.outputHash)) return undefined;
  return {
    state: 'no_progress',
    reason: 'no_progress',
    detail: `the command's exit code and output did not change for ${String(limit)} ticks`,
  };
}

function summaryEvent(session: ModeSession, state: VerifyModeState) {
  return session.event('summary', {
    table: formatVerifySummary(state),
    best: state.best,
    ticks: state.ticks.length,
  });
}

/** Snapshots the tree as `refs/allium-loop/<slug>/tick-<n>` and makes it the best (`…/best`). */
async function keepCheckpoint(session: ModeSession, scope: CheckpointScope, tick: number) {
  const ref = `refs/allium-loop/${session.ledger.slug}/tick-${String(tick)}`;
  const made = await createCheckpoint(scope, ref, `allium-loop ${session.ledger.slug} tick ${String(tick)}`);
  if (made !== undefined) await pointRef(scope, bestRef(session), made.commit);
  return made;
}

function bestRef(session: ModeSession): string {
  return `refs/allium-loop/${session.ledger.slug}/best`;
}

function checkpointEntry(session: ModeSession, tick: number, made: { ref: string; commit: string }) {
  return { tick, ref: made.ref, object: made.commit, at: new Date(session.now()).toISOString() };
}

function cancelled(): ModeStop {
  return { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' };
}

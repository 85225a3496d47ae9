import type { JournalEvent, Ledger, VerifyModeConfig, VerifyModeState } from '@allium-loop/ledger';
import {
  fingerprintCommand,
  guardCommand,
  readFingerprint,
  storeFingerprint,
} from './command-fingerprint.js';
import { gitHead } from '../project/git.js';
import type { GitSnapshots } from '../project/git.js';
import {
  closeTick,
  guardRunRefs,
  openTick,
  resetToRecordedRevision,
  revertTick,
  rollBackOpenTick,
  tickEdits,
} from './climb-tick.js';
import type { ModeContext } from './mode-context.js';
import { loopRecord, ModeSession } from './mode-session.js';
import { callTokens } from './mode-stall.js';
import { runUserCommand, type UserCommandResult } from './run-user-command.js';
import { formatVerifySummary, tickLine } from './verify-report.js';
import {
  decideVerify,
  initialVerifyProgram,
  type LoopExitName,
  type VerifyAction,
  type VerifyObservation,
  type VerifyProgramState,
} from './verify-program.js';
import { abortableSleep } from '../driver/wait-for-rate-limit.js';

/** The configuration of a `--verify` run, kept in the ledger so a resume needs nothing else. */
export type { VerifyModeConfig, VerifyModeState } from '@allium-loop/ledger';
export type { VerifyTickRecord } from './verify-program.js';

/**
 * The `--verify` loop (with hill-climb). Frame: run the command once for a baseline and record the git revision
 * (and, when climbing, checkpoint the tree as the first best). Each tick: one agent step, then the engine runs the
 * command itself; exit 0 converges (hill-climb: the target score does), anything else is recorded with its delta
 * and the loop goes on after the interval, until a cap. Hill-climb ticks that do not improve the score have the
 * agent's paths reverted.
 *
 * This function is the driver: the policy is the pure program {@link decideVerify}; here each of its actions is
 * carried out through the session (ledger, journal, agent call, caps), git and the user's command.
 */
export async function runVerifyMode(context: ModeContext, config: VerifyModeConfig): Promise<Ledger> {
  const session = new ModeSession(context, 'verify');
  await session.abandonPendingIntents();
  const git = session.git;
  let program = initialVerifyProgram(
    session.ledger.goal,
    config,
    session.ledger.caps.noProgressTicks,
    loopRecord(session.ledger, 'verify').verify,
  );
  let observation: VerifyObservation = {
    kind: 'opened',
    head: await gitHead(session.cwd),
    verdictHead: session.ledger.verdicts.at(-1)?.git.head ?? null,
  };
  for (;;) {
    const decision = decideVerify(program, observation);
    program = decision.state;
    const action = decision.action;
    if (action.kind === 'finish') {
      const extra = [
        summaryEvent(session, program.record),
        ...loopExitEvent(session, action.loop, action.stop.state),
      ];
      return session.finish(action.stop, extra);
    }
    observation = await carryOut(session, git, program, action, context.sleep ?? abortableSleep);
  }
}

/** Carries out one action of the program and returns what was observed. */
async function carryOut(
  session: ModeSession,
  git: GitSnapshots,
  program: VerifyProgramState,
  action: Exclude<VerifyAction, { kind: 'finish' }>,
  sleep: (ms: number, signal: AbortSignal) => Promise<void>,
): Promise<VerifyObservation> {
  const slug = session.ledger.slug;
  switch (action.kind) {
    case 'baseline':
      return baseline(session, git, program, action.checkpoint);
    case 'save_baseline': {
      const checkpoints =
        action.checkpoint === null
          ? session.ledger.checkpoints
          : [...session.ledger.checkpoints, checkpointEntry(session, 0, action.checkpoint)];
      await session.persist({ ...session.ledger, checkpoints }, [
        session.event(action.event.name, action.event.data),
      ]);
      await saveVerifyState(session, action.record);
      session.say(action.line);
      return { kind: 'saved' };
    }
    case 'reset_head':
      return {
        kind: 'head_reset',
        outcome: await resetToRecordedRevision(session, git, action.from, action.to),
      };
    case 'roll_back':
      await rollBackOpenTick(session, git, action.open, action.why);
      await saveVerifyState(session, { ...program.record, pending: null });
      return { kind: 'rolled_back' };
    case 'check_refs':
      await guardRunRefs(session, git, action.best, action.open);
      return { kind: 'refs_checked' };
    case 'check_caps':
      return { kind: 'capped', stop: session.capReached(), ...wallClockLeft(session) };
    case 'begin_tick':
      return { kind: 'tick_begun', tick: await session.beginTick() };
    case 'open_tick':
      return {
        kind: 'tick_opened',
        open: (await openTick(git, slug, action.tick, action.best)) ?? null,
      };
    case 'save_state':
      await saveVerifyState(session, action.record);
      return { kind: 'saved' };
    case 'agent_step': {
      session.say(`→ tick ${String(action.tick)}: agent step`);
      const step = await session.callAgent('step', 'step', action.prompt);
      return step.kind === 'stop'
        ? { kind: 'step_stopped', stop: step.stop }
        : { kind: 'stepped', outcome: step.result.outcome, tokens: callTokens(step.result.tokens) };
    }
    case 'collect_edits':
      return { kind: 'edits_collected', edits: await tickEdits(git, slug, action.open) };
    case 'guard_command': {
      const recorded = readFingerprint(program.record.fingerprint ?? {});
      return { kind: 'guarded', stop: await guardCommand(session, program.record.config.command, recorded) };
    }
    case 'measure': {
      session.say(`→ tick ${String(action.tick)}: ${program.record.config.command}`);
      const run = await measure(session, program.record.config.command);
      return { kind: 'measured', run, head: await gitHead(session.cwd) };
    }
    case 'keep_checkpoint': {
      const made = await keepCheckpoint(session, git, action.tick);
      if (made !== undefined)
        await session.persist({
          ...session.ledger,
          checkpoints: [...session.ledger.checkpoints, checkpointEntry(session, action.tick, made.object)],
        });
      return { kind: 'checkpoint_kept', commit: made?.object };
    }
    case 'revert': {
      // Only the paths the agent touched go back; the user's edits and logs elsewhere in the tree stay.
      await revertTick(git, slug, action.open, action.edits);
      return { kind: 'reverted' };
    }
    case 'record_tick':
      await recordTick(session, git, action);
      return { kind: 'recorded' };
    case 'wait':
      session.say(action.line);
      // Not a busy wait: a timer, ended early by Ctrl-C; the wall clock is already taken into `ms`.
      await sleep(action.ms, session.signal).catch(() => undefined);
      return { kind: 'waited' };
  }
}

async function recordTick(
  session: ModeSession,
  git: GitSnapshots,
  action: Extract<VerifyAction, { kind: 'record_tick' }>,
): Promise<void> {
  const line = tickLine(action.entry, action.record.best, session.ledger);
  const events: JournalEvent[] = [
    ...action.events.map((event) => session.event(event.name, event.data)),
    session.event('tick', { ...action.entry, outputTail: action.outputTail }),
    {
      type: 'tick_recorded',
      at: new Date(session.now()).toISOString(),
      tick: action.entry.tick,
      line,
      usd: session.ledger.spent.usd,
    },
  ];
  await session.saveTick(
    { ...loopRecord(session.ledger, 'verify'), verify: action.record },
    action.measure,
    events,
  );
  if (action.close) await closeTick(git, session.ledger.slug);
  session.say(line);
}

/** What is left of the wall-clock cap (`undefined`: none). */
function wallClockLeft(session: ModeSession): { wallClockLeftMs?: number } {
  const cap = session.ledger.caps.wallClockMs;
  return cap === undefined ? {} : { wallClockLeftMs: Math.max(0, cap - session.elapsedMs()) };
}

/** Saves the verify mode's state in the ledger. */
async function saveVerifyState(session: ModeSession, state: VerifyModeState): Promise<void> {
  await session.saveState({ ...loopRecord(session.ledger, 'verify'), verify: state });
}

async function baseline(
  session: ModeSession,
  git: GitSnapshots,
  program: VerifyProgramState,
  checkpoint: boolean,
): Promise<VerifyObservation> {
  const command = program.record.config.command;
  session.say(`→ baseline: ${command}`);
  const run = await measure(session, command);
  if (run.aborted) return { kind: 'baselined', run, head: null, fingerprint: {} };
  const head = await gitHead(session.cwd);
  const fingerprint = await fingerprintCommand(command, session.cwd, session.env, session.ledger.slug);
  const made = checkpoint ? await keepCheckpoint(session, git, 0) : undefined;
  return {
    kind: 'baselined',
    run,
    head,
    fingerprint: storeFingerprint(fingerprint),
    ...(checkpoint ? { checkpoint: made?.object ?? null } : {}),
  };
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

function summaryEvent(session: ModeSession, state: VerifyModeState): JournalEvent {
  return session.event('summary', {
    table: formatVerifySummary(state),
    best: state.best,
    ticks: state.ticks.length,
  });
}

/** `x-verify.exit`: the `/loop` name of the end (`CONVERGED`, `EXHAUSTED`) for scripts written against it. */
function loopExitEvent(session: ModeSession, loop: LoopExitName | undefined, state: string): JournalEvent[] {
  return loop === undefined ? [] : [session.event('exit', { status: loop, state })];
}

/** Snapshots the tree as `refs/allium-loop/<slug>/tick-<n>` and makes it the best (`…/best`). */
async function keepCheckpoint(session: ModeSession, git: GitSnapshots, tick: number) {
  const slug = session.ledger.slug;
  const made = await git.checkpoint(slug, `tick-${String(tick)}`);
  if (made !== undefined) await git.pointRef(`refs/allium-loop/${slug}/best`, made.object);
  return made;
}

function checkpointEntry(session: ModeSession, tick: number, commit: string) {
  const ref = `refs/allium-loop/${session.ledger.slug}/tick-${String(tick)}`;
  return { tick, ref, object: commit, at: new Date(session.now()).toISOString() };
}

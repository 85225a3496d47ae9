import { readFile, rm } from 'node:fs/promises';
import { basename, dirname, extname, join, relative } from 'node:path';
import type { JournalEvent, Ledger, StateFileModeConfig, StateFileModeState } from '@allium-loop/ledger';
import { writeFileAtomic } from '@allium-loop/ledger';
import type { ModeContext } from './mode-context.js';
import { loopRecord, ModeSession } from './mode-session.js';
import { callTokens } from './mode-stall.js';
import { checkDoneClaim, parseAlState, serializeAlState, type AlState } from './state-file.js';
import {
  decideStateFile,
  initialStateFileProgram,
  type StateFileEvent,
  type StateFileObservation,
  type StateFileRead,
} from './state-file-program.js';
import { formatTable } from './verify-report.js';

export type { StateFileModeConfig, StateFileModeState } from '@allium-loop/ledger';

/** One iteration of a state-file run. */
export type StateFileIteration = StateFileModeState['iterations'][number];

/** Reads the state file; never throws. */
export async function readAlState(path: string): Promise<StateFileRead> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) return { kind: 'missing' };
  const parsed = parseAlState(text);
  return parsed.ok ? { kind: 'ok', state: parsed.value } : { kind: 'invalid', issues: parsed.issues };
}

/**
 * The `--state-file` loop: each tick a fresh agent reads the state file, does one unit of work and writes it
 * back. The engine ignores the agent's text; it keeps `goal` and `iteration` itself, puts back a file the agent
 * broke, and before accepting `done` checks the result against the artefacts (files exist and are non-empty,
 * stated counts match) — a failed check turns `done` back into `in_progress` with the reason in `error`.
 *
 * This function is the driver: the policy is the pure program {@link decideStateFile}; here each of its actions is
 * carried out through the session (ledger, journal, agent call, caps) and the file system.
 */
export async function runStateFileMode(context: ModeContext, config: StateFileModeConfig): Promise<Ledger> {
  const session = new ModeSession(context, 'state-file');
  await session.abandonPendingIntents();
  let program = initialStateFileProgram(
    session.ledger.goal,
    config,
    relative(session.cwd, config.path),
    session.ledger.caps.noProgressTicks,
    loopRecord(session.ledger, 'state-file')['state-file'],
  );
  let observation: StateFileObservation = { kind: 'opened', read: await readAlState(config.path) };
  for (;;) {
    const decision = decideStateFile(program, observation);
    program = decision.state;
    const action = decision.action;
    switch (action.kind) {
      case 'initialise':
        await writeFileAtomic(config.path, serializeAlState(action.write));
        observation = { kind: 'written' };
        break;
      case 'check_done':
        observation = { kind: 'checked', problem: await checkDoneClaim(action.result, session.cwd) };
        break;
      case 'check_caps':
        observation = { kind: 'capped', stop: session.capReached() };
        break;
      case 'step':
        observation = await step(session, config, action.write);
        break;
      case 'record_tick': {
        await writeFileAtomic(config.path, serializeAlState(action.write));
        await session.saveTick(
          { ...loopRecord(session.ledger, 'state-file'), 'state-file': program.record },
          { ...action.measure, line: action.line },
          action.events.map((event) => stamp(session, config, event)),
        );
        observation = { kind: 'written' };
        break;
      }
      case 'finish':
        return session.finish(action.stop, action.summary ? [summaryEvent(session, program.record)] : []);
    }
  }
}

/** One tick: the state written for the agent, one agent call, the file read back and a `done` claim checked. */
async function step(
  session: ModeSession,
  config: StateFileModeConfig,
  write: AlState,
): Promise<StateFileObservation> {
  const tick = await session.beginTick();
  // A temp file an interrupted agent left half-written is not the state: only the renamed file counts.
  await rm(stateTempFile(config.path), { force: true });
  await writeFileAtomic(config.path, serializeAlState(write));
  session.say(`→ tick ${String(tick)}: agent step (iteration ${String(write.iteration)})`);
  const lastIteration = write.iteration + Math.max(0, session.ledger.caps.maxTicks - tick);
  const called = await session.callAgent(
    'step',
    'step',
    stateFilePrompt(write, config, session.cwd, lastIteration),
  );
  if (called.kind === 'stop') return { kind: 'step_stopped', stop: called.stop };
  const read = await readAlState(config.path);
  const problem =
    read.kind === 'ok' && read.state.status === 'done'
      ? await checkDoneClaim(read.state.result, session.cwd)
      : undefined;
  const tokens = callTokens(called.result.tokens);
  return { kind: 'stepped', tick, outcome: called.result.outcome, read, problem, tokens };
}

/** A program event as a journal event, stamped now at the current tick. */
function stamp(session: ModeSession, config: StateFileModeConfig, event: StateFileEvent): JournalEvent {
  if (event.type === 'extension') return session.event(event.name, event.data);
  return {
    type: 'violation',
    at: new Date(session.now()).toISOString(),
    tick: session.ledger.tick,
    kind: event.kind,
    path: config.path,
    detail: event.detail,
    reverted: true,
  };
}

/** The summary table of a state-file run. */
export function formatStateFileSummary(state: StateFileModeState): string {
  return formatTable(
    ['tick', 'agent', 'claimed', 'kept', 'note'],
    state.iterations.map((i) => [String(i.tick), i.agentOutcome, i.claimed, i.status, i.note ?? '']),
  );
}

function summaryEvent(session: ModeSession, state: StateFileModeState): JournalEvent {
  return session.event('summary', {
    table: formatStateFileSummary(state),
    iterations: state.iterations.length,
  });
}

/** The temp file of the `/al` write protocol: `<dir>/<name>.tmp` beside the state file (`.al-state.tmp`). */
export function stateTempFile(path: string): string {
  return join(dirname(path), `${basename(path, extname(path))}.tmp`);
}

/**
 * The prompt of one iteration, in the `/al` shape: the goal, the state file, "Iteration N of max" (the last
 * iteration this run's tick cap allows), what to write for each outcome, and the write protocol (the temp file,
 * then a rename over the state file).
 */
export function stateFilePrompt(
  current: AlState,
  config: StateFileModeConfig,
  cwd: string,
  lastIteration: number,
): string {
  const path = relative(cwd, config.path);
  const temp = relative(cwd, stateTempFile(config.path));
  const iteration = String(current.iteration);
  return [
    `Goal: ${current.goal}`,
    `State file: ${path}`,
    `Iteration: ${iteration} of ${String(lastIteration)}`,
    '',
    "You are one iteration of a loop working towards the goal. The state file is the loop's only memory: read it",
    'first. "progress" says what earlier iterations did, "error" what the engine rejected last time.',
    'Do ONE unit of work towards the goal, then update the state file with:',
    '  "status": "in_progress" while work remains, "done" when the goal is complete, "failed" if it cannot be done;',
    '  "progress": what has been done so far (keep it short and cumulative);',
    '  "result": when done, what was produced — name every output file and state counts exactly (e.g.',
    '            "Wrote 12 entries to out/list.md"); the engine checks the files exist and the counts match;',
    '  "error": why, when failed; otherwise null.',
    `Keep "goal" as it is and "iteration" at ${iteration}.`,
    `Write the file atomically: write the whole JSON to ${temp} first, then rename ${temp} to ${path}.`,
    'Your reply text is ignored; completion is signalled by the state file alone.',
    '',
    'Current state:',
    serializeAlState(current),
  ].join('\n');
}

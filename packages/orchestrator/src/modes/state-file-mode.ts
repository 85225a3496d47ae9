import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import type { JournalEvent, Ledger, StateFileModeConfig, StateFileModeState } from '@allium-loop/ledger';
import { writeFileAtomic } from '@allium-loop/ledger';
import type { ModeContext, ModeStop } from './mode-context.js';
import { loopRecord, ModeSession } from './mode-session.js';
import {
  checkDoneClaim,
  initialAlState,
  parseAlState,
  serializeAlState,
  type AlState,
} from './state-file.js';
import { formatTable } from './verify-report.js';
import { checksum } from './prd.js';

export type { StateFileModeConfig, StateFileModeState } from '@allium-loop/ledger';

/** One iteration of a state-file run. */
export type StateFileIteration = StateFileModeState['iterations'][number];

type Read =
  { kind: 'missing' } | { kind: 'invalid'; issues: readonly string[] } | { kind: 'ok'; state: AlState };

/** Reads the state file; never throws. */
export async function readAlState(path: string): Promise<Read> {
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
 */
export async function runStateFileMode(context: ModeContext, config: StateFileModeConfig): Promise<Ledger> {
  const session = new ModeSession(context, 'state-file');
  await session.abandonPendingIntents();
  let state = loopRecord(session.ledger, 'state-file')['state-file'] ?? {
    config,
    iterations: [],
    digests: [],
  };
  const first = await readAlState(config.path);
  if (first.kind === 'invalid')
    return session.finish({
      state: 'failed',
      reason: 'state_invalid',
      detail: `${config.path}: ${first.issues.join('; ')}`,
    });
  let current = first.kind === 'ok' ? first.state : initialAlState(session.ledger.goal);
  if (first.kind === 'missing') await writeFileAtomic(config.path, serializeAlState(current));
  if (current.goal !== session.ledger.goal)
    return session.finish({
      state: 'failed',
      reason: 'goal_mismatch',
      detail: `${config.path} holds another goal: "${current.goal}"`,
    });
  for (;;) {
    const ended = await settle(session, current, config);
    if (ended !== undefined) return session.finish(ended.stop, [summaryEvent(session, state)]);
    const stop = session.capReached() ?? noProgress(state, session.ledger.caps.noProgressTicks);
    if (stop !== undefined) return session.finish(stop, [summaryEvent(session, state)]);
    const tick = await session.beginTick();
    current = {
      ...current,
      status: current.status === 'pending' ? 'in_progress' : current.status,
      iteration: current.iteration + 1,
    };
    await writeFileAtomic(config.path, serializeAlState(current));
    session.say(`→ tick ${String(tick)}: agent step (iteration ${String(current.iteration)})`);
    const step = await session.callAgent('step', 'step', stateFilePrompt(current, config, session.cwd));
    if (step.kind === 'stop') return session.finish(step.stop, [summaryEvent(session, state)]);
    const judged = await judge(session, current, config);
    current = judged.state;
    await writeFileAtomic(config.path, serializeAlState(current));
    const iteration: StateFileIteration = {
      tick,
      agentOutcome: step.result.outcome,
      claimed: judged.claimed,
      status: current.status,
      note: judged.note,
    };
    state = {
      ...state,
      iterations: [...state.iterations, iteration],
      digests: [...state.digests, checksum([current.status, current.progress, current.result])],
    };
    const line = `tick ${String(tick)} · state ${judged.claimed}${judged.claimed === current.status ? '' : ` → ${current.status}`}${judged.note === null ? '' : ` (${judged.note})`}`;
    const measure = {
      tick,
      measured: `state ${judged.claimed}${judged.claimed === current.status ? '' : ` → ${current.status}`}`,
      fingerprint: `state ${state.digests.at(-1) ?? ''}`,
      converged: current.status === 'done',
    };
    await session.saveTick({ ...loopRecord(session.ledger, 'state-file'), 'state-file': state }, measure, [
      ...judged.events,
      session.event('iteration', { ...iteration }),
      {
        type: 'tick_recorded',
        at: new Date(session.now()).toISOString(),
        tick,
        line,
        usd: session.ledger.spent.usd,
      },
    ]);
    session.say(line);
  }
}

/** A state already `done` (verified) or `failed` ends the run. */
async function settle(
  session: ModeSession,
  current: AlState,
  config: StateFileModeConfig,
): Promise<{ stop: ModeStop } | undefined> {
  if (current.status === 'failed')
    return {
      stop: {
        state: 'failed',
        reason: 'agent_failed',
        detail: `the agent marked the goal failed: ${current.error ?? 'no error given'}`,
      },
    };
  if (current.status !== 'done') return undefined;
  const problem = await checkDoneClaim(current.result, session.cwd);
  if (problem !== undefined) return undefined;
  return {
    stop: {
      state: 'converged',
      reason: 'state_done',
      detail: `${relative(session.cwd, config.path)} is done and its result checks out`,
    },
  };
}

async function judge(
  session: ModeSession,
  engine: AlState,
  config: StateFileModeConfig,
): Promise<{ state: AlState; claimed: string; note: string | null; events: JournalEvent[] }> {
  const read = await readAlState(config.path);
  const at = new Date(session.now()).toISOString();
  const tick = session.ledger.tick;
  if (read.kind !== 'ok') {
    const detail =
      read.kind === 'missing'
        ? 'the agent deleted the state file'
        : `the agent left the state file invalid: ${read.issues.join('; ')}`;
    return {
      state: { ...engine, error: detail },
      claimed: 'invalid',
      note: 'state file restored',
      events: [
        {
          type: 'violation',
          at,
          tick,
          kind: 'state_file_invalid',
          path: config.path,
          detail,
          reverted: true,
        },
      ],
    };
  }
  const written = { ...read.state, goal: engine.goal, iteration: engine.iteration };
  const events: JournalEvent[] = [];
  if (read.state.goal !== engine.goal)
    events.push({
      type: 'violation',
      at,
      tick,
      kind: 'state_goal_edited',
      path: config.path,
      detail: 'the agent changed the goal; restored',
      reverted: true,
    });
  if (written.status !== 'done') return { state: written, claimed: written.status, note: null, events };
  const problem = await checkDoneClaim(written.result, session.cwd);
  if (problem === undefined) return { state: written, claimed: 'done', note: 'result verified', events };
  events.push(session.event('done_rejected', { reason: problem }));
  return {
    state: { ...written, status: 'in_progress', error: `done not accepted: ${problem}` },
    claimed: 'done',
    note: problem,
    events,
  };
}

function noProgress(state: StateFileModeState, limit: number): ModeStop | undefined {
  if (state.digests.length <= limit) return undefined;
  const recent = state.digests.slice(-(limit + 1));
  if (!recent.every((d) => d === recent[0])) return undefined;
  return {
    state: 'no_progress',
    reason: 'no_progress',
    detail: `the state file did not change for ${String(limit)} iterations`,
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

function stateFilePrompt(current: AlState, config: StateFileModeConfig, cwd: string): string {
  const path = relative(cwd, config.path);
  return [
    `You are one iteration of a loop working towards this goal: ${current.goal}`,
    '',
    `The loop's memory is the JSON file ${path}. Read it first: "progress" says what earlier iterations did,`,
    '"error" says what the engine rejected last time.',
    'Do ONE unit of work towards the goal, then write the file back atomically (temp file, then rename) with:',
    '  "status": "in_progress" while work remains, "done" when the goal is complete, "failed" if it cannot be done;',
    '  "progress": what has been done so far (keep it short and cumulative);',
    '  "result": when done, what was produced — name every output file and state counts exactly (e.g.',
    '            "Wrote 12 entries to out/list.md"); the engine checks the files exist and the counts match;',
    '  "error": why, when failed; otherwise null.',
    `Keep "goal" and "iteration" (${String(current.iteration)}) as they are. Your reply text is ignored; only files count.`,
    '',
    'Current state:',
    serializeAlState(current),
  ].join('\n');
}

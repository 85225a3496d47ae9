import { appendFile, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { JournalEvent, Ledger, StoryModeConfig, StoryModeState } from '@allium-loop/ledger';
import { writeFileAtomic } from '@allium-loop/ledger';
import {
  fingerprintCommand,
  guardCommand,
  readFingerprint,
  storeFingerprint,
} from './command-fingerprint.js';
import type { ModeContext, ModeStop } from './mode-context.js';
import { loopRecord, ModeSession } from './mode-session.js';
import {
  applyVerdict,
  changedCriteria,
  criteriaChecksums,
  nextStory,
  parsePrd,
  readVerdict,
  serializePrd,
  tamperedStatus,
  type Prd,
  type StoryVerdict,
  type UserStory,
} from './prd.js';
import { outputTail, runUserCommand } from './run-user-command.js';
import { evaluatorPrompt, generatorPrompt } from './story-prompts.js';
import { formatStorySummary, progressEntry } from './story-report.js';

export type { StoryModeConfig, StoryModeState } from '@allium-loop/ledger';

/** One iteration of a story run. */
export type StoryIteration = StoryModeState['iterations'][number];

/** Reads and validates a PRD file; the issues name the file. */
export async function loadPrd(
  path: string,
): Promise<{ ok: true; value: Prd } | { ok: false; issues: string[] }> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return { ok: false, issues: [`${path}: cannot be read: ${(error as Error).message}`] };
  }
  const parsed = parsePrd(text);
  return parsed.ok ? parsed : { ok: false, issues: parsed.issues.map((issue) => `${path}: ${issue}`) };
}

/**
 * The `--stories` loop: one story per tick, lowest priority number first. A generator phase, the verify command
 * when there is one, then a fresh-context evaluator asked to disprove the work, whose verdict is read from its
 * result file. The engine alone writes the PRD (atomically) and `progress.md` beside it; acceptance criteria and
 * the verify command are checksummed at the start, and an agent that edits them stops the run. Status fields an
 * agent edits (`passes`, `blocked`, `rejections`) are put back and logged as violations.
 */
export async function runStoryMode(context: ModeContext, config: StoryModeConfig): Promise<Ledger> {
  const session = new ModeSession(context, 'stories');
  await session.abandonPendingIntents();
  const loaded = await loadPrd(config.prdPath);
  if (!loaded.ok)
    return session.finish({ state: 'failed', reason: 'prd_invalid', detail: loaded.issues.join('; ') });
  let prd = loaded.value;
  let state = loopRecord(session.ledger, 'stories').stories ?? { config, checksums: null, iterations: [] };
  if (state.checksums === null) {
    state = {
      ...state,
      checksums: {
        criteria: criteriaChecksums(prd),
        verify:
          config.verifyCommand === undefined
            ? null
            : storeFingerprint(
                await fingerprintCommand(config.verifyCommand, session.cwd, session.env, session.ledger.slug),
              ),
      },
    };
    await session.saveState({ ...loopRecord(session.ledger, 'stories'), stories: state }, [
      session.event('checksums', { stories: Object.keys(state.checksums!.criteria).length }),
    ]);
  }
  for (;;) {
    const guard = await guardPrd(session, state, prd);
    if ('stop' in guard) return session.finish(guard.stop, [summaryEvent(session, state)]);
    prd = guard.prd;
    const story = nextStory(prd, config.storyId);
    if (story === undefined) return session.finish(endState(prd, config), [summaryEvent(session, state)]);
    const stop = session.capReached();
    if (stop !== undefined) return session.finish(stop, [summaryEvent(session, state)]);
    const tick = await session.beginTick();
    const judged = await workStory(session, state, prd, story, tick);
    if ('stop' in judged) return session.finish(judged.stop, [summaryEvent(session, state)]);
    const again = await guardPrd(session, state, prd);
    if ('stop' in again) return session.finish(again.stop, [summaryEvent(session, state)]);
    prd = applyVerdict(prd, story.id, judged.verdict, config.evalRetries, tick);
    state = await record(session, state, prd, story, judged.verdict, tick);
  }
}

async function workStory(
  session: ModeSession,
  state: StoryModeState,
  prd: Prd,
  story: UserStory,
  tick: number,
): Promise<{ verdict: StoryVerdict } | { stop: ModeStop }> {
  const { config } = state;
  const progressPath = join(dirname(config.prdPath), 'progress.md');
  session.say(`→ tick ${String(tick)}: generate ${story.id} (${story.title})`);
  const generated = await session.callAgent(
    'generate',
    'generate',
    generatorPrompt(story, config, progressPath),
  );
  if (generated.kind === 'stop') return { stop: generated.stop };
  const guard = await guardPrd(session, state, prd);
  if ('stop' in guard) return guard;
  if (generated.result.outcome !== 'ok')
    return {
      verdict: {
        verdict: 'REJECT',
        reason: `the generator ended ${generated.result.outcome}${generated.result.detail === undefined ? '' : `: ${generated.result.detail}`}`,
      },
    };
  if (config.verifyCommand !== undefined) {
    session.say(`→ tick ${String(tick)}: ${config.verifyCommand}`);
    const run = await runUserCommand({
      command: config.verifyCommand,
      cwd: session.cwd,
      env: session.env,
      timeoutMs: session.ledger.caps.testTimeoutMs,
      signal: session.signal,
    });
    if (run.aborted)
      return { stop: { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' } };
    if (run.exitCode !== 0)
      return {
        verdict: {
          verdict: 'REJECT',
          reason: `the verify command ${run.timedOut ? 'timed out' : `exited ${String(run.exitCode)}`}: ${outputTail(run.output, 300).trim()}`,
        },
      };
  }
  if (config.skipEval) return { verdict: { verdict: 'PASS' } };
  session.say(`→ tick ${String(tick)}: evaluate ${story.id} (fresh context)`);
  const evaluated = await session.callAgent(
    'evaluate',
    'evaluate',
    evaluatorPrompt(story, config, session.resultFile('evaluate')),
  );
  if (evaluated.kind === 'stop') return { stop: evaluated.stop };
  const text = await readFile(evaluated.resultFile, 'utf8').catch(() => undefined);
  return { verdict: readVerdict(text) };
}

/** Stops on edited criteria or verify command; puts back status fields an agent changed. */
async function guardPrd(
  session: ModeSession,
  state: StoryModeState,
  engine: Prd,
): Promise<{ prd: Prd } | { stop: ModeStop }> {
  const sums = state.checksums!;
  const command = state.config.verifyCommand;
  if (command !== undefined || sums.verify !== null) {
    const edited = await guardCommand(session, command ?? '', readFingerprint(sums.verify ?? {}));
    if (edited !== undefined) return { stop: edited };
  }
  const disk = await loadPrd(state.config.prdPath);
  if (!disk.ok) {
    await writeFileAtomic(state.config.prdPath, serializePrd(engine));
    await session.persist(session.ledger, [
      violation(session, 'prd_invalid', disk.issues.join('; '), true, state.config.prdPath),
    ]);
    return { prd: engine };
  }
  const edited = changedCriteria(disk.value, sums.criteria);
  if (edited.length > 0) {
    const detail = `acceptance criteria of ${edited.join(', ')} changed since the run started`;
    await session.persist(session.ledger, [
      violation(session, 'criteria_edited', detail, false, state.config.prdPath),
    ]);
    return { stop: { state: 'failed', reason: 'criteria_edited', detail } };
  }
  const tampered = tamperedStatus(engine, disk.value);
  if (tampered.length > 0 || serializePrd(disk.value) !== serializePrd(engine)) {
    await writeFileAtomic(state.config.prdPath, serializePrd(engine));
    const detail =
      tampered.length > 0
        ? `status of ${tampered.join(', ')} changed by an agent; restored`
        : 'PRD edited by an agent; restored';
    await session.persist(session.ledger, [
      violation(session, 'prd_edited', detail, true, state.config.prdPath),
    ]);
  }
  return { prd: engine };
}

function violation(
  session: ModeSession,
  kind: string,
  detail: string,
  reverted: boolean,
  path: string,
): JournalEvent {
  return {
    type: 'violation',
    at: new Date(session.now()).toISOString(),
    tick: session.ledger.tick,
    kind,
    path,
    detail,
    reverted,
  };
}

async function record(
  session: ModeSession,
  state: StoryModeState,
  prd: Prd,
  story: UserStory,
  verdict: StoryVerdict,
  tick: number,
): Promise<StoryModeState> {
  await writeFileAtomic(state.config.prdPath, serializePrd(prd));
  const at = new Date(session.now()).toISOString();
  const blocked = prd.userStories.find((s) => s.id === story.id)?.blocked === true;
  const reason = verdict.verdict === 'REJECT' ? verdict.reason : null;
  const iteration: StoryIteration = {
    tick,
    story: story.id,
    title: story.title,
    verdict: verdict.verdict,
    reason,
    blocked,
    at,
  };
  await appendFile(join(dirname(state.config.prdPath), 'progress.md'), progressEntry(iteration));
  const next = { ...state, iterations: [...state.iterations, iteration] };
  const line = `tick ${String(tick)} · ${story.id} · ${verdict.verdict}${reason === null ? '' : ` (${reason})`}${blocked ? ' · blocked' : ''}`;
  const open = nextStory(prd, state.config.storyId);
  const measure = {
    tick,
    measured: `${story.id}: ${verdict.verdict}${reason === null ? '' : ` (${reason})`}`,
    fingerprint: `stories ${prd.userStories.map((s) => `${s.id}:${s.passes ? 'P' : s.blocked === true ? 'B' : String(s.rejections ?? 0)}`).join(',')}`,
    converged: open === undefined && endState(prd, state.config).state === 'converged',
  };
  await session.saveTick({ ...loopRecord(session.ledger, 'stories'), stories: next }, measure, [
    session.event('verdict', { ...iteration }),
    { type: 'tick_recorded', at, tick, line, usd: session.ledger.spent.usd },
  ]);
  session.say(line);
  return next;
}

function endState(prd: Prd, config: StoryModeConfig): ModeStop {
  const scope = prd.userStories.filter((s) => config.storyId === undefined || s.id === config.storyId);
  if (scope.length === 0)
    return {
      state: 'failed',
      reason: 'story_not_found',
      detail: `no story "${config.storyId ?? ''}" in the PRD`,
    };
  const blocked = scope.filter((s) => !s.passes && s.blocked === true).map((s) => s.id);
  if (blocked.length === 0)
    return {
      state: 'converged',
      reason: 'all_stories_pass',
      detail: `${String(scope.length)} stor${scope.length === 1 ? 'y passes' : 'ies pass'}`,
    };
  return {
    state: 'no_progress',
    reason: 'stories_blocked',
    detail: `blocked after ${String(config.evalRetries)} rejections: ${blocked.join(', ')}`,
  };
}

function summaryEvent(session: ModeSession, state: StoryModeState): JournalEvent {
  return session.event('summary', { table: formatStorySummary(state), iterations: state.iterations.length });
}

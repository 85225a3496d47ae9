import { appendFile, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { JournalEvent, Ledger, StoryModeConfig, StoryModeState } from '@allium-loop/ledger';
import { writeFileAtomic } from '@allium-loop/ledger';
import {
  fingerprintCommand,
  guardCommand,
  readFingerprint,
  storeFingerprint,
} from './command-fingerprint.js';
import type { GitSnapshots } from '../project/git.js';
import { callTokens } from './mode-stall.js';
import {
  DEFAULT_LOOP_MODE,
  loadPromptTemplate,
  promptLocations,
  templateVariableName,
} from './loop-config.js';
import type { ModeContext } from './mode-context.js';
import { loopRecord, ModeSession } from './mode-session.js';
import { parsePrd, type Prd, type UserStory } from './prd.js';
import { outputTail, runUserCommand } from './run-user-command.js';
import {
  decideStories,
  initialStoryProgram,
  type PrdRead,
  type StoryEvent,
  type StoryObservation,
} from './story-program.js';
import { evaluatorPrompt, generatorPrompt, type PromptContext } from './story-prompts.js';
import { formatStorySummary } from './story-report.js';
import { touchedPaths } from './touched-paths.js';

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

async function readPrd(path: string): Promise<PrdRead> {
  const loaded = await loadPrd(path);
  return loaded.ok ? { kind: 'ok', prd: loaded.value } : { kind: 'invalid', issues: loaded.issues };
}

/**
 * The `--stories` loop: one story per tick, lowest priority number first. A generator phase, the verify command
 * when there is one, then a fresh-context evaluator asked to disprove the work, whose verdict is read from its
 * result file only. The engine alone writes the PRD (atomically) and `progress.md` beside it.
 *
 * This function is the driver: the policy is the pure program {@link decideStories}; here each of its actions is
 * carried out through the session (ledger, journal, agent calls, caps), git snapshots and the file system.
 */
export async function runStoryMode(context: ModeContext, config: StoryModeConfig): Promise<Ledger> {
  const session = new ModeSession(context, 'stories');
  await session.abandonPendingIntents();
  let program = initialStoryProgram(
    config,
    session.ledger.caps.maxTicks,
    loopRecord(session.ledger, 'stories').stories,
    session.ledger.caps.noProgressTicks,
  );
  const progressPath = join(dirname(config.prdPath), 'progress.md');
  const git = session.git;
  const saveRecord = (record: StoryModeState, events: readonly StoryEvent[]) =>
    session.saveState(
      { ...loopRecord(session.ledger, 'stories'), stories: record },
      events.map((e) => stamp(session, e)),
    );
  let observation: StoryObservation = { kind: 'opened', read: await readPrd(config.prdPath) };
  for (;;) {
    const decision = decideStories(program, observation);
    program = decision.state;
    const action = decision.action;
    switch (action.kind) {
      case 'fingerprint':
        observation = {
          kind: 'fingerprinted',
          verify:
            action.command === undefined
              ? null
              : storeFingerprint(
                  await fingerprintCommand(action.command, session.cwd, session.env, session.ledger.slug),
                ),
        };
        break;
      case 'save_state':
        await saveRecord(action.record, action.events);
        observation = { kind: 'written' };
        break;
      case 'apply_pending':
        await writeOutputs(config.prdPath, progressPath, action.prd, action.progress);
        await saveRecord(action.record, [
          { type: 'extension', name: 'pending_written', data: { prd: config.prdPath } },
        ]);
        observation = { kind: 'written' };
        break;
      case 'read_prd':
        observation = await readGuarded(session, program.record);
        break;
      case 'restore_prd':
        await writeFileAtomic(config.prdPath, action.write);
        await session.persist(
          session.ledger,
          action.events.map((e) => stamp(session, e)),
        );
        observation = { kind: 'written' };
        break;
      case 'check_caps':
        observation = { kind: 'capped', stop: session.capReached(), tick: session.ledger.tick + 1 };
        break;
      case 'generate':
        observation = await generate(session, git, config, progressPath, action.story, action.line);
        break;
      case 'verify': {
        session.say(`→ tick ${String(session.ledger.tick)}: ${action.command}`);
        const run = await runUserCommand({
          command: action.command,
          cwd: session.cwd,
          env: session.env,
          timeoutMs: session.ledger.caps.testTimeoutMs,
          signal: session.signal,
        });
        observation = run.aborted
          ? {
              kind: 'stopped',
              stop: { state: 'cancelled', reason: 'cancelled', detail: 'cancelled by the user' },
            }
          : {
              kind: 'verified',
              exitCode: run.exitCode,
              timedOut: run.timedOut,
              tail: outputTail(run.output, 300).trim(),
            };
        break;
      }
      case 'evaluate':
        observation = await evaluate(session, git, config, action.story, action.preGenerator);
        break;
      case 'record_tick': {
        const at = new Date(session.now()).toISOString();
        await session.saveTick(
          { ...loopRecord(session.ledger, 'stories'), stories: action.record },
          action.measure,
          [
            ...action.events.map((e) => stamp(session, e)),
            session.event('verdict', { ...action.record.iterations.at(-1)! }),
            {
              type: 'tick_recorded',
              at,
              tick: action.measure.tick,
              line: action.line,
              usd: session.ledger.spent.usd,
            },
          ],
        );
        await writeOutputs(config.prdPath, progressPath, action.write, action.progress);
        session.say(action.line);
        observation = { kind: 'written' };
        break;
      }
      case 'finish':
        for (const line of action.lines) session.say(line);
        return session.finish(action.stop, [
          ...action.events.map((e) => stamp(session, e)),
          ...(action.summary
            ? [
                session.event('summary', {
                  table: formatStorySummary(program.record),
                  iterations: program.record.iterations.length,
                  counts: action.lines,
                }),
              ]
            : []),
        ]);
    }
  }
}

/** Writes the PRD atomically and appends the progress entry unless `progress.md` already ends with it. */
async function writeOutputs(
  prdPath: string,
  progressPath: string,
  prd: string,
  progress: string,
): Promise<void> {
  await writeFileAtomic(prdPath, prd);
  const log = await readFile(progressPath, 'utf8').catch(() => '');
  if (!log.endsWith(progress)) await appendFile(progressPath, progress);
}

/** The PRD on disk and the verify command's fingerprint check. */
async function readGuarded(session: ModeSession, record: StoryModeState): Promise<StoryObservation> {
  const sums = record.checksums;
  const command = record.config.verifyCommand;
  const commandEdited =
    command !== undefined || (sums?.verify ?? null) !== null
      ? await guardCommand(session, command ?? '', readFingerprint(sums?.verify ?? {}))
      : undefined;
  return {
    kind: 'prd_read',
    read: await readPrd(record.config.prdPath),
    commandEdited,
    at: new Date(session.now()).toISOString(),
  };
}

/** The prompt context of a role: the custom agent-loop prompt when the run has a `.loop/config.json` setup. */
async function promptContext(
  session: ModeSession,
  config: StoryModeConfig,
  role: 'generator' | 'evaluator',
  variables: Record<string, string>,
): Promise<PromptContext> {
  const loop = config.loop;
  const mode = loop?.mode ?? DEFAULT_LOOP_MODE;
  const all: Record<string, string> = {
    ...Object.fromEntries(
      Object.entries(loop?.scopeBudgets ?? {}).map(([key, value]) => [
        templateVariableName(key),
        String(value),
      ]),
    ),
    MODE: mode,
    PRD_PATH: config.prdPath,
    PROGRESS_PATH: join(dirname(config.prdPath), 'progress.md'),
    MAX_ITERATIONS: String(session.ledger.caps.maxTicks),
    ITERATION: String(session.ledger.tick),
    ...variables,
  };
  if (loop === undefined) return { variables: all };
  const template = await loadPromptTemplate(await promptLocations(session.cwd, session.env), role, mode);
  return { template, variables: all };
}

function storyVariables(story: UserStory): Record<string, string> {
  return { STORY_ID: story.id, STORY_TITLE: story.title };
}

/** A snapshot of the tree (a commit on no branch), or `undefined` outside git or when git fails. */
async function snapshot(git: GitSnapshots, message: string): Promise<string | undefined> {
  return (await git.snapshot(message).catch(() => undefined))?.object;
}

/** One tick's generator: the tick starts, the tree is snapshotted (the evaluator's diff base), the agent runs. */
async function generate(
  session: ModeSession,
  git: GitSnapshots,
  config: StoryModeConfig,
  progressPath: string,
  story: UserStory,
  line: string,
): Promise<StoryObservation> {
  const tick = await session.beginTick();
  session.say(line);
  const slug = session.ledger.slug;
  const preGenerator = await snapshot(
    git,
    `allium-loop ${slug} before the generator of tick ${String(tick)}`,
  );
  // Kept under a ref so the evaluator (and anyone after it) can diff against it.
  if (preGenerator !== undefined)
    await git.pointRef(`refs/allium-loop/${slug}/pre-generator`, preGenerator).catch(() => undefined);
  const context = await promptContext(session, config, 'generator', {
    ...storyVariables(story),
    ...(preGenerator === undefined ? {} : { PRE_GENERATOR_SHA: preGenerator }),
  });
  const called = await session.callAgent(
    'generate',
    'generate',
    generatorPrompt(story, config, progressPath, context),
  );
  if (called.kind === 'stop') return { kind: 'stopped', stop: called.stop };
  // The tree the generator left, without the engine's own PRD and progress log: what stall detection compares.
  const left = await git
    .workingTree([resolve(session.cwd, config.prdPath), resolve(session.cwd, progressPath)])
    .catch(() => null);
  if (called.result.outcome !== 'ok')
    session.say(
      `warning: the generator ended ${called.result.outcome}; the loop goes on and judges what is on disk`,
    );
  return {
    kind: 'generated',
    tick,
    outcome: called.result.outcome,
    detail: called.result.detail,
    preGenerator,
    tree: left?.tree,
    tokens: callTokens(called.result.tokens),
  };
}

/**
 * The evaluator, in a fresh context, scoped by the pre-generator commit. Its "never edit" rule is the engine's:
 * the tree is snapshotted just before and after the call, and every path it changed is put back (what it wrote
 * stays reachable under `refs/allium-loop/<slug>/evaluator-reverted-<tick>`).
 */
async function evaluate(
  session: ModeSession,
  git: GitSnapshots,
  config: StoryModeConfig,
  story: UserStory,
  preGenerator: string | undefined,
): Promise<StoryObservation> {
  const tick = session.ledger.tick;
  const slug = session.ledger.slug;
  session.say(`→ tick ${String(tick)}: evaluate ${story.id} (fresh context)`);
  const before = await snapshot(git, `allium-loop ${slug} before the evaluator of tick ${String(tick)}`);
  const resultFile = session.resultFile('evaluate');
  const context = await promptContext(session, config, 'evaluator', {
    ...storyVariables(story),
    RESULT_FILE: resultFile,
    ...(preGenerator === undefined ? {} : { PRE_GENERATOR_SHA: preGenerator }),
  });
  const called = await session.callAgent(
    'evaluate',
    'evaluate',
    evaluatorPrompt(story, config, resultFile, preGenerator, context),
  );
  const edited = before === undefined ? [] : await revertEvaluatorEdits(git, slug, tick, before);
  if (called.kind === 'stop') return { kind: 'stopped', stop: called.stop };
  const text = await readFile(called.resultFile, 'utf8').catch(() => undefined);
  return { kind: 'evaluated', verdictText: text, edited, tokens: callTokens(called.result.tokens) };
}

async function revertEvaluatorEdits(
  git: GitSnapshots,
  slug: string,
  tick: number,
  before: string,
): Promise<string[]> {
  const after = await snapshot(git, `allium-loop ${slug} after the evaluator of tick ${String(tick)}`);
  if (after === undefined) return [];
  const paths = await touchedPaths(git, before, after);
  if (paths.length === 0) return [];
  await git.restorePaths(before, paths);
  await git.pointRef(`refs/allium-loop/${slug}/evaluator-reverted-${String(tick)}`, after);
  return paths;
}

/** A program event as a journal event, stamped now at the current tick. */
function stamp(session: ModeSession, event: StoryEvent): JournalEvent {
  if (event.type === 'extension') return session.event(event.name, event.data);
  return {
    type: 'violation',
    at: new Date(session.now()).toISOString(),
    tick: session.ledger.tick,
    kind: event.kind,
    ...(event.path === undefined ? {} : { path: event.path }),
    detail: event.detail,
    reverted: event.reverted,
  };
}

import type { StoryModeConfig, StoryModeState } from '@allium-loop/ledger';
import type { ModeStop, TickMeasure } from './mode-context.js';
import { modeStall } from './mode-stall.js';
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
import { exitLines, progressEntry } from './story-report.js';

/**
 * The `--stories` loop as a pure program, like `decide` for the spec loop and `decideStateFile`: the driver
 * (`runStoryMode`) carries out each action through its effects (reading and writing the PRD, the agent calls, the
 * verify command, snapshots, the caps) and feeds back what it saw. Every policy decision — which story next, what a
 * crashed generator, a failed command, a verdict or an evaluator's edits mean, what an agent's PRD edit means, what
 * goes into the notes and `progress.md`, when the run stops — is made here, without I/O.
 */

/** The PRD as the driver read it from disk. */
export type PrdRead =
  | { readonly kind: 'ok'; readonly prd: Prd }
  | { readonly kind: 'invalid'; readonly issues: readonly string[] };

/** A judged iteration before it is recorded. */
interface Judgement {
  readonly verdict: StoryVerdict | { readonly verdict: 'WARN'; readonly reason: string };
  readonly events: readonly StoryEvent[];
}

/** The story under way in the current tick. */
interface Work {
  readonly story: UserStory;
  readonly tick: number;
  readonly preGenerator: string | undefined;
  readonly generatorCrash: string | undefined;
  readonly judged: Judgement | undefined;
  /** When the PRD was read before the engine's copy was put back over an agent's edit of it. */
  readonly restoredAt?: string;
  /** The tree the generator left (PRD and `progress.md` excluded), when git could snapshot it. */
  readonly tree: string | undefined;
  /** Tokens the tick's agent calls used so far, when they reported any. */
  readonly tokens: number | undefined;
}

/** Where the program is: what the next `prd_read` / `written` observation continues with. */
type Phase =
  | 'open'
  | 'pending_applied'
  | 'cleared'
  | 'checksums'
  | 'select'
  | 'after_generate'
  | 'after_judge'
  | 'restored_select'
  | 'restored_after_generate'
  | 'restored_after_judge'
  | 'recorded';

/** The program's state: the engine's copy of the PRD and the mode state kept in the ledger. */
export interface StoryProgramState {
  readonly config: StoryModeConfig;
  readonly maxTicks: number;
  readonly noProgressTicks: number;
  readonly prd: Prd | undefined;
  readonly record: StoryModeState;
  readonly phase: Phase;
  readonly work: Work | undefined;
}

/** What the driver observed after an action. */
export type StoryObservation =
  /** The PRD as found when the run starts or resumes. */
  | { readonly kind: 'opened'; readonly read: PrdRead }
  /** The verify command's stored fingerprint (`null` without a verify command), asked for by `fingerprint`. */
  | { readonly kind: 'fingerprinted'; readonly verify: NonNullable<StoryModeState['checksums']>['verify'] }
  /** A write (`save_state`, `restore_prd`, `record_tick`) is done. */
  | { readonly kind: 'written' }
  /**
   * The PRD on disk, and the stop of a verify command whose files an agent edited, asked for by `read_prd`; `at`
   * is the time it was read (an iteration recorded after it is stamped with it).
   */
  | {
      readonly kind: 'prd_read';
      readonly read: PrdRead;
      readonly commandEdited: ModeStop | undefined;
      readonly at: string;
    }
  /** The caps at a tick boundary: the stop of the first cap reached, if any, and the number the next tick gets. */
  | { readonly kind: 'capped'; readonly stop: ModeStop | undefined; readonly tick: number }
  /** An agent call or the verify command was stopped (cancel, wall clock, budget, a port failure). */
  | { readonly kind: 'stopped'; readonly stop: ModeStop }
  /** The generator ended: the tick it ran in, its outcome, and the snapshot taken just before it. */
  | {
      readonly kind: 'generated';
      readonly tick: number;
      readonly outcome: string;
      readonly detail: string | undefined;
      readonly preGenerator: string | undefined;
      /** The tree just after it (PRD and `progress.md` excluded); absent outside git. */
      readonly tree?: string | undefined;
      /** Tokens its call used, when the agent reported them. */
      readonly tokens?: number | undefined;
    }
  /** The verify command ran. */
  | {
      readonly kind: 'verified';
      readonly exitCode: number | null;
      readonly timedOut: boolean;
      readonly tail: string;
    }
  /**
   * The evaluator ended: the text of its result file (`undefined` when it wrote none) and the paths it edited,
   * which the driver has already reverted.
   */
  | {
      readonly kind: 'evaluated';
      readonly verdictText: string | undefined;
      readonly edited: readonly string[];
      /** Tokens its call used, when the agent reported them. */
      readonly tokens?: number | undefined;
    };

/** An event for the journal, stamped by the driver. */
export type StoryEvent =
  | {
      readonly type: 'violation';
      readonly kind: 'prd_invalid' | 'criteria_edited' | 'prd_edited' | 'evaluator_edited';
      readonly detail: string;
      readonly reverted: boolean;
      readonly path?: string;
    }
  | { readonly type: 'extension'; readonly name: string; readonly data: Record<string, unknown> };

/** What the program asks the driver to do next. */
export type StoryAction =
  /** Fingerprint the verify command (the criteria checksums are the program's). */
  | { readonly kind: 'fingerprint'; readonly command: string | undefined }
  /**
   * Write what the last recorded iteration left pending (a run killed while writing it): the PRD, and the
   * `progress.md` entry unless the file already ends with it; then save `record` (pending cleared).
   */
  | {
      readonly kind: 'apply_pending';
      readonly prd: string;
      readonly progress: string;
      readonly record: StoryModeState;
    }
  /** Save the mode state (no tick). */
  | { readonly kind: 'save_state'; readonly record: StoryModeState; readonly events: readonly StoryEvent[] }
  /** Read the PRD from disk and check the verify command's fingerprint. */
  | { readonly kind: 'read_prd' }
  /** Put the engine's PRD back over an agent's edit. */
  | { readonly kind: 'restore_prd'; readonly write: string; readonly events: readonly StoryEvent[] }
  /** Check the caps (and cancellation) before a new tick. */
  | { readonly kind: 'check_caps' }
  /** Start a tick: snapshot the tree, call the generator for `story`. `line` is shown first. */
  | { readonly kind: 'generate'; readonly story: UserStory; readonly line: string }
  /** Run the verify command. */
  | { readonly kind: 'verify'; readonly command: string }
  /** Snapshot the tree, call the evaluator, revert what it edited, read its result file. */
  | { readonly kind: 'evaluate'; readonly story: UserStory; readonly preGenerator: string | undefined }
  /**
   * Record the tick with `record` (which holds the PRD text and the progress entry as `pending`), then write the
   * PRD and append the entry to `progress.md`.
   */
  | {
      readonly kind: 'record_tick';
      readonly write: string;
      readonly progress: string;
      readonly record: StoryModeState;
      readonly measure: TickMeasure;
      readonly line: string;
      readonly events: readonly StoryEvent[];
    }
  /** End the run; `lines` are shown (the exit counts); `summary` when the summary table goes to the journal. */
  | {
      readonly kind: 'finish';
      readonly stop: ModeStop;
      readonly summary: boolean;
      readonly lines: readonly string[];
      readonly events: readonly StoryEvent[];
    };

export interface StoryDecision {
  readonly state: StoryProgramState;
  readonly action: StoryAction;
}

/** One iteration as the ledger keeps it. */
type Iteration = StoryModeState['iterations'][number];

/** The program's first state for a run (or a resume, with the mode state the ledger kept). */
export function initialStoryProgram(
  config: StoryModeConfig,
  maxTicks: number,
  record: StoryModeState | undefined,
  noProgressTicks: number,
): StoryProgramState {
  return {
    config,
    maxTicks,
    noProgressTicks,
    prd: undefined,
    record: record ?? { config, checksums: null, iterations: [] },
    phase: 'open',
    work: undefined,
  };
}

/** Pure: the next action for `observation`. */
export function decideStories(state: StoryProgramState, observation: StoryObservation): StoryDecision {
  switch (observation.kind) {
    case 'opened':
      return opened(state, observation.read);
    case 'fingerprinted': {
      const record: StoryModeState = {
        ...state.record,
        checksums: { criteria: criteriaChecksums(state.prd!), verify: observation.verify },
      };
      const events: StoryEvent[] = [
        {
          type: 'extension',
          name: 'checksums',
          data: { stories: Object.keys(record.checksums!.criteria).length },
        },
      ];
      return {
        state: { ...state, record, phase: 'checksums' },
        action: { kind: 'save_state', record, events },
      };
    }
    case 'written':
      return written(state);
    case 'prd_read':
      return guarded(state, observation);
    case 'capped':
      return capped(state, observation.stop, observation.tick);
    case 'stopped':
      return finish(state, observation.stop);
    case 'generated':
      return generated(state, observation);
    case 'verified':
      return verified(state, observation);
    case 'evaluated':
      return evaluated(state, observation);
  }
}

function opened(state: StoryProgramState, read: PrdRead): StoryDecision {
  const pending = state.record.pending;
  if (pending !== undefined) {
    const parsed = parsePrd(pending.prd);
    if (parsed.ok) {
      const { pending: _written, ...record } = state.record;
      return {
        state: { ...state, prd: parsed.value, record, phase: 'pending_applied' },
        action: { kind: 'apply_pending', prd: pending.prd, progress: pending.progress, record },
      };
    }
  }
  if (read.kind === 'invalid')
    return finish(state, { state: 'failed', reason: 'prd_invalid', detail: read.issues.join('; ') }, false);
  const next = { ...state, prd: read.prd };
  if (state.record.checksums === null)
    return { state: next, action: { kind: 'fingerprint', command: state.config.verifyCommand } };
  return { state: { ...next, phase: 'select' }, action: { kind: 'read_prd' } };
}

function written(state: StoryProgramState): StoryDecision {
  const readAgain = (phase: Phase): StoryDecision => ({
    state: { ...state, phase },
    action: { kind: 'read_prd' },
  });
  switch (state.phase) {
    case 'checksums':
    case 'cleared':
    case 'pending_applied':
      return readAgain('select');
    case 'recorded': {
      const { pending: _written, ...record } = state.record;
      return {
        state: { ...state, record, phase: 'cleared' },
        action: { kind: 'save_state', record, events: [] },
      };
    }
    case 'restored_select':
      return select(state);
    case 'restored_after_generate':
      return judge(state);
    case 'restored_after_judge':
      return record(state, state.work!.restoredAt!);
    default:
      throw new Error(`stories program: nothing was being written in phase ${state.phase}`);
  }
}

/**
 * The PRD guard, before a story is chosen, after the generator and before a verdict is recorded: an edited verify
 * command stops the run; edited acceptance criteria stop it `failed`; a PRD an agent broke, or whose status fields
 * (or anything else) it changed, gets the engine's copy back with a violation.
 */
function guarded(
  current: StoryProgramState,
  observation: Extract<StoryObservation, { kind: 'prd_read' }>,
): StoryDecision {
  const state =
    current.work === undefined
      ? current
      : { ...current, work: { ...current.work, restoredAt: observation.at } };
  if (observation.commandEdited !== undefined) return finish(state, observation.commandEdited);
  const engine = state.prd!;
  const restored: Phase =
    state.phase === 'select'
      ? 'restored_select'
      : state.phase === 'after_generate'
        ? 'restored_after_generate'
        : 'restored_after_judge';
  const path = state.config.prdPath;
  const read = observation.read;
  if (read.kind === 'invalid')
    return {
      state: { ...state, phase: restored },
      action: {
        kind: 'restore_prd',
        write: serializePrd(engine),
        events: [
          { type: 'violation', kind: 'prd_invalid', detail: read.issues.join('; '), reverted: true, path },
        ],
      },
    };
  const edited = changedCriteria(read.prd, state.record.checksums!.criteria);
  if (edited.length > 0) {
    const detail = `acceptance criteria of ${edited.join(', ')} changed since the run started`;
    return finish(state, { state: 'failed', reason: 'criteria_edited', detail }, true, [
      { type: 'violation', kind: 'criteria_edited', detail, reverted: false, path },
    ]);
  }
  const tampered = tamperedStatus(engine, read.prd);
  if (tampered.length > 0 || serializePrd(read.prd) !== serializePrd(engine)) {
    const detail =
      tampered.length > 0
        ? `status of ${tampered.join(', ')} changed by an agent; restored`
        : 'PRD edited by an agent; restored';
    return {
      state: { ...state, phase: restored },
      action: {
        kind: 'restore_prd',
        write: serializePrd(engine),
        events: [{ type: 'violation', kind: 'prd_edited', detail, reverted: true, path }],
      },
    };
  }
  if (state.phase === 'select') return select(state);
  if (state.phase === 'after_generate') return judge(state);
  return record(state, observation.at);
}

/** The next story, or the end of the run when none is left; otherwise the caps before its tick. */
function select(state: StoryProgramState): StoryDecision {
  const story = nextStory(state.prd!, state.config.storyId);
  if (story === undefined) return finish(state, endState(state.prd!, state.config));
  return { state: { ...state, phase: 'select' }, action: { kind: 'check_caps' } };
}

function capped(state: StoryProgramState, stop: ModeStop | undefined, tick: number): StoryDecision {
  const stalled = stop ?? noProgress(state.record, state.noProgressTicks);
  if (stalled !== undefined) return finish(state, stalled);
  const story = nextStory(state.prd!, state.config.storyId)!;
  return {
    state,
    action: {
      kind: 'generate',
      story,
      line: `Iteration ${String(tick)}/${String(state.maxTicks)} — ${story.id}: ${story.title}`,
    },
  };
}

/**
 * A generator that did not end `ok` is a warning, not a rejection: the loop goes on to judge what is on disk
 * (the work may be done). The PRD is guarded first.
 */
function generated(
  state: StoryProgramState,
  observation: Extract<StoryObservation, { kind: 'generated' }>,
): StoryDecision {
  const story = nextStory(state.prd!, state.config.storyId)!;
  const crash =
    observation.outcome === 'ok'
      ? undefined
      : `${observation.outcome}${observation.detail === undefined ? '' : `: ${observation.detail}`}`;
  const work: Work = {
    story,
    tick: observation.tick,
    preGenerator: observation.preGenerator,
    generatorCrash: crash,
    judged: undefined,
    tree: observation.tree,
    tokens: observation.tokens,
  };
  return { state: { ...state, work, phase: 'after_generate' }, action: { kind: 'read_prd' } };
}

/** After the generator: the verify command when there is one, then the evaluator (unless `skipEval`). */
function judge(state: StoryProgramState): StoryDecision {
  const { config } = state;
  if (config.verifyCommand !== undefined)
    return { state, action: { kind: 'verify', command: config.verifyCommand } };
  return afterVerify(state);
}

function afterVerify(state: StoryProgramState): StoryDecision {
  const work = state.work!;
  if (!state.config.skipEval)
    return { state, action: { kind: 'evaluate', story: work.story, preGenerator: work.preGenerator } };
  // With no evaluator and no verify command, nothing judged a crashed generator's work: no verdict.
  const verdict: Judgement['verdict'] =
    work.generatorCrash !== undefined && state.config.verifyCommand === undefined
      ? {
          verdict: 'WARN',
          reason: `the generator crashed (${work.generatorCrash}) and nothing else judges the story`,
        }
      : { verdict: 'PASS' };
  return judged(state, { verdict, events: [] });
}

function verified(
  state: StoryProgramState,
  observation: Extract<StoryObservation, { kind: 'verified' }>,
): StoryDecision {
  if (observation.exitCode === 0) return afterVerify(state);
  const how = observation.timedOut ? 'timed out' : `exited ${String(observation.exitCode)}`;
  return judged(state, {
    verdict: { verdict: 'REJECT', reason: `the verify command ${how}: ${observation.tail}` },
    events: [],
  });
}

/**
 * The evaluator's verdict, read from its result file only. An evaluator that edited files broke its one rule:
 * the driver has reverted the edits, the violation is journaled, and its verdict is void (a PASS it may have
 * earned by fixing the work itself must not count, and the story is not charged a rejection for it).
 */
function evaluated(
  current: StoryProgramState,
  observation: Extract<StoryObservation, { kind: 'evaluated' }>,
): StoryDecision {
  const work = current.work!;
  const tokens = observation.tokens === undefined ? work.tokens : (work.tokens ?? 0) + observation.tokens;
  const state = { ...current, work: { ...work, tokens } };
  if (observation.edited.length > 0) {
    const detail = `the evaluator edited ${observation.edited.join(', ')}; reverted, and its verdict discarded`;
    return judged(state, {
      verdict: { verdict: 'WARN', reason: detail },
      events: [{ type: 'violation', kind: 'evaluator_edited', detail, reverted: true }],
    });
  }
  return judged(state, { verdict: readVerdict(observation.verdictText), events: [] });
}

/** A verdict is reached: the PRD is guarded once more before it is applied. */
function judged(state: StoryProgramState, judgement: Judgement): StoryDecision {
  return {
    state: { ...state, work: { ...state.work!, judged: judgement }, phase: 'after_judge' },
    action: { kind: 'read_prd' },
  };
}

/** Applies the verdict to the engine's PRD and records the iteration, its progress entry and the tick. */
function record(state: StoryProgramState, at: string): StoryDecision {
  const work = state.work!;
  const judgement = work.judged!;
  const verdict = judgement.verdict;
  const prd =
    verdict.verdict === 'WARN'
      ? state.prd!
      : applyVerdict(state.prd!, work.story.id, verdict, state.config.evalRetries);
  const blocked = prd.userStories.find((s) => s.id === work.story.id)?.blocked === true;
  const reason = verdict.verdict === 'PASS' ? null : verdict.reason;
  const iteration: Iteration = {
    tick: work.tick,
    story: work.story.id,
    title: work.story.title,
    verdict: verdict.verdict,
    reason,
    blocked: blocked && verdict.verdict === 'REJECT',
    at,
    ...(work.generatorCrash === undefined ? {} : { generatorCrash: work.generatorCrash }),
    ...(work.preGenerator === undefined ? {} : { preGenerator: work.preGenerator }),
    ...(state.config.skipEval ? { skipEval: true } : {}),
  };
  const write = serializePrd(prd);
  const progress = progressEntry(iteration);
  const statuses = storyStatuses(prd);
  const stalled = {
    state: work.tree === undefined ? statuses : `${statuses} tree ${work.tree}`,
    ...(work.tokens === undefined ? {} : { tokens: work.tokens }),
  };
  const record: StoryModeState = {
    ...state.record,
    iterations: [...state.record.iterations, { ...iteration, ...stalled }],
    pending: { prd: write, progress },
  };
  const line = `tick ${String(work.tick)} · ${work.story.id} · ${verdict.verdict}${reason === null ? '' : ` (${reason})`}${iteration.blocked ? ' · blocked' : ''}`;
  const open = nextStory(prd, state.config.storyId);
  const events: StoryEvent[] = [
    ...judgement.events,
    ...(work.generatorCrash === undefined
      ? []
      : [
          {
            type: 'extension' as const,
            name: 'generator_crashed',
            data: { story: work.story.id, outcome: work.generatorCrash },
          },
        ]),
  ];
  return {
    state: { ...state, prd, record, work: undefined, phase: 'recorded' },
    action: {
      kind: 'record_tick',
      write,
      progress,
      record,
      measure: {
        tick: work.tick,
        measured: `${work.story.id}: ${verdict.verdict}${reason === null ? '' : ` (${reason})`}`,
        fingerprint: statuses,
        converged: open === undefined && endState(prd, state.config).state === 'converged',
      },
      line,
      events,
    },
  };
}

/** The stories' statuses: each one's id and `P` (passes), `B` (blocked) or its number of rejections. */
function storyStatuses(prd: Prd): string {
  return `stories ${prd.userStories.map((s) => `${s.id}:${s.passes ? 'P' : s.blocked === true ? 'B' : String(s.rejections ?? 0)}`).join(',')}`;
}

/**
 * The evaluator's stall rules ({@link modeStall}) over the iterations: an iteration's state is the stories'
 * statuses after it and the tree its generator left. A verdict always moves it (a pass, or one more rejection on
 * the way to blocked); iterations without one (`WARN`) move it only through the tree. An iteration recorded before
 * the state was kept never equals another.
 */
function noProgress(record: StoryModeState, limit: number): ModeStop | undefined {
  return modeStall(
    record.iterations.map((it) => ({
      fingerprint: it.state ?? `tick ${String(it.tick)}`,
      tokens: it.tokens,
    })),
    limit,
    {
      unchanged: `the stories and the generator's tree did not change for ${String(limit)} iterations`,
      subject: 'the stories',
    },
  );
}

/** How a run with no story left to work ends: every story in scope passes, or the rest are blocked. */
export function endState(prd: Prd, config: StoryModeConfig): ModeStop {
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

function finish(
  state: StoryProgramState,
  stop: ModeStop,
  summary = true,
  events: readonly StoryEvent[] = [],
): StoryDecision {
  const lines = state.prd === undefined ? [] : exitLines(state.prd, state.config.storyId);
  return { state, action: { kind: 'finish', stop, summary, lines, events } };
}

import type { StateFileModeConfig, StateFileModeState } from '@allium-loop/ledger';
import type { ModeStop, TickMeasure } from './mode-context.js';
import { initialAlState, type AlState } from './state-file.js';
import { checksum } from './prd.js';
import { modeStall } from './mode-stall.js';

/**
 * The `--state-file` loop as a pure program, like `decide` for the spec loop: the driver (`runStateFileMode`)
 * carries out each action through its effects (file reads and writes, the agent call, the done check, the caps)
 * and feeds back what it saw; every policy decision — what to write, when a `done` counts, what a broken file
 * means, when the run stops — is made here, without I/O.
 */

/** What the driver read from the state file. */
export type StateFileRead =
  | { readonly kind: 'missing' }
  | { readonly kind: 'invalid'; readonly issues: readonly string[] }
  | { readonly kind: 'ok'; readonly state: AlState };

/** The program's state: the engine's copy of the file and the mode state kept in the ledger. */
export interface StateFileProgramState {
  readonly goal: string;
  readonly config: StateFileModeConfig;
  /** The file's path as shown to the user (relative to the project). */
  readonly displayPath: string;
  readonly noProgressTicks: number;
  readonly current: AlState | undefined;
  /** The state written for the agent step under way. */
  readonly stepping: AlState | undefined;
  readonly record: StateFileModeState;
}

/** What the driver observed after an action. */
export type StateFileObservation =
  /** The file as found when the run starts or resumes. */
  | { readonly kind: 'opened'; readonly read: StateFileRead }
  /** A write asked for by `initialise` or `record_tick` is done. */
  | { readonly kind: 'written' }
  /** The result of checking `current.result` against the artefacts; `undefined` when it checks out. */
  | { readonly kind: 'checked'; readonly problem: string | undefined }
  /** The caps at a tick boundary: the stop of the first cap reached, if any. */
  | { readonly kind: 'capped'; readonly stop: ModeStop | undefined }
  /** The agent call was stopped (cancel, wall clock, budget, a port failure). */
  | { readonly kind: 'step_stopped'; readonly stop: ModeStop }
  /**
   * The agent step ended: its outcome, the file it left, and (when that file claims `done`) the check of its
   * result, `undefined` when it checks out.
   */
  | {
      readonly kind: 'stepped';
      readonly tick: number;
      readonly outcome: string;
      readonly read: StateFileRead;
      readonly problem: string | undefined;
      /** Tokens the agent call used, when the agent reported them. */
      readonly tokens?: number | undefined;
    };

/** An event for the journal, stamped by the driver. */
export type StateFileEvent =
  | {
      readonly type: 'violation';
      readonly kind: 'state_file_invalid' | 'state_goal_edited';
      readonly detail: string;
    }
  | { readonly type: 'extension'; readonly name: string; readonly data: Record<string, unknown> };

/** What the program asks the driver to do next. */
export type StateFileAction =
  /** Write the first state of a run whose file does not exist yet. */
  | { readonly kind: 'initialise'; readonly write: AlState }
  /** Check `result` (a `done` claim) against the artefacts. */
  | { readonly kind: 'check_done'; readonly result: unknown }
  /** Check the caps (and cancellation) before a new tick. */
  | { readonly kind: 'check_caps' }
  /** Start a tick: write `write`, call the agent once, read the file back (and check a `done` claim). */
  | { readonly kind: 'step'; readonly write: AlState }
  /** Write the judged state and record the tick in the ledger and journal. */
  | {
      readonly kind: 'record_tick';
      readonly write: AlState;
      readonly measure: TickMeasure;
      readonly line: string;
      readonly events: readonly StateFileEvent[];
    }
  /** End the run; `summary` when the summary table goes to the journal. */
  | { readonly kind: 'finish'; readonly stop: ModeStop; readonly summary: boolean };

export interface StateFileDecision {
  readonly state: StateFileProgramState;
  readonly action: StateFileAction;
}

/** The program's first state for a run (or a resume, with the mode state the ledger kept). */
export function initialStateFileProgram(
  goal: string,
  config: StateFileModeConfig,
  displayPath: string,
  noProgressTicks: number,
  record: StateFileModeState | undefined,
): StateFileProgramState {
  return {
    goal,
    config,
    displayPath,
    noProgressTicks,
    current: undefined,
    stepping: undefined,
    record: record ?? { config, iterations: [], digests: [] },
  };
}

/** Pure: the next action for `observation`. */
export function decideStateFile(
  state: StateFileProgramState,
  observation: StateFileObservation,
): StateFileDecision {
  switch (observation.kind) {
    case 'opened':
      return opened(state, observation.read);
    case 'written':
      return settle(state);
    case 'checked':
      return observation.problem === undefined
        ? finish(state, {
            state: 'converged',
            reason: 'state_done',
            detail: `${state.displayPath} is done and its result checks out; result: ${shown(state.current?.result)}`,
          })
        : { state, action: { kind: 'check_caps' } };
    case 'capped': {
      const stop = observation.stop ?? noProgress(state.record, state.noProgressTicks);
      if (stop !== undefined) return finish(state, withLastProgress(stop, state.current));
      const current = state.current ?? initialAlState(state.goal);
      const next: AlState = {
        ...current,
        status: current.status === 'pending' ? 'in_progress' : current.status,
        iteration: current.iteration + 1,
      };
      return { state: { ...state, stepping: next }, action: { kind: 'step', write: next } };
    }
    case 'step_stopped':
      return finish(state, observation.stop);
    case 'stepped':
      return stepped(state, observation);
  }
}

function opened(state: StateFileProgramState, read: StateFileRead): StateFileDecision {
  if (read.kind === 'invalid')
    return finish(
      state,
      { state: 'failed', reason: 'state_invalid', detail: `${state.config.path}: ${read.issues.join('; ')}` },
      false,
    );
  if (read.kind === 'missing') {
    const current = initialAlState(state.goal);
    return { state: { ...state, current }, action: { kind: 'initialise', write: current } };
  }
  if (read.state.goal !== state.goal)
    return finish(
      state,
      {
        state: 'failed',
        reason: 'goal_mismatch',
        detail: `${state.config.path} holds another goal: "${read.state.goal}"`,
      },
      false,
    );
  return settle({ ...state, current: read.state });
}

/** A state already `done` (once its result checks out) or `failed` ends the run; otherwise the caps are checked. */
function settle(state: StateFileProgramState): StateFileDecision {
  const current = state.current ?? initialAlState(state.goal);
  if (current.status === 'failed')
    return finish(state, {
      state: 'failed',
      reason: 'agent_failed',
      detail: `the agent marked the goal failed: ${current.error ?? 'no error given'}`,
    });
  if (current.status === 'done') return { state, action: { kind: 'check_done', result: current.result } };
  return { state, action: { kind: 'check_caps' } };
}

/**
 * Judges the file the agent left: the engine keeps `goal` and `iteration`, puts back a file the agent deleted or
 * broke, and turns a `done` whose result does not check out back into `in_progress` with the reason in `error`.
 */
function stepped(
  state: StateFileProgramState,
  observation: Extract<StateFileObservation, { kind: 'stepped' }>,
): StateFileDecision {
  const engine = state.stepping ?? state.current ?? initialAlState(state.goal);
  const judged = judge(engine, observation.read, observation.problem);
  const current = judged.state;
  const iteration = {
    tick: observation.tick,
    agentOutcome: observation.outcome,
    claimed: judged.claimed,
    status: current.status,
    note: judged.note,
  };
  const record: StateFileModeState = {
    ...state.record,
    iterations: [...state.record.iterations, iteration],
    digests: [...state.record.digests, checksum([current.status, current.progress, current.result])],
    tokens: [...(state.record.tokens ?? []), observation.tokens ?? 0],
  };
  const change = judged.claimed === current.status ? '' : ` → ${current.status}`;
  return {
    state: { ...state, current, stepping: undefined, record },
    action: {
      kind: 'record_tick',
      write: current,
      measure: {
        tick: observation.tick,
        measured: `state ${judged.claimed}${change}`,
        fingerprint: `state ${record.digests.at(-1) ?? ''}`,
        converged: current.status === 'done',
      },
      line: `tick ${String(observation.tick)} · state ${judged.claimed}${change}${judged.note === null ? '' : ` (${judged.note})`}`,
      events: [...judged.events, { type: 'extension', name: 'iteration', data: { ...iteration } }],
    },
  };
}

function judge(
  engine: AlState,
  read: StateFileRead,
  problem: string | undefined,
): { state: AlState; claimed: string; note: string | null; events: StateFileEvent[] } {
  if (read.kind !== 'ok') {
    const detail =
      read.kind === 'missing'
        ? 'the agent deleted the state file'
        : `the agent left the state file invalid: ${read.issues.join('; ')}`;
    return {
      state: { ...engine, error: detail },
      claimed: 'invalid',
      note: 'state file restored',
      events: [{ type: 'violation', kind: 'state_file_invalid', detail }],
    };
  }
  const written = { ...read.state, goal: engine.goal, iteration: engine.iteration };
  const events: StateFileEvent[] = [];
  if (read.state.goal !== engine.goal)
    events.push({
      type: 'violation',
      kind: 'state_goal_edited',
      detail: 'the agent changed the goal; restored',
    });
  if (written.status !== 'done') return { state: written, claimed: written.status, note: null, events };
  if (problem === undefined) return { state: written, claimed: 'done', note: 'result verified', events };
  events.push({ type: 'extension', name: 'done_rejected', data: { reason: problem } });
  return {
    state: { ...written, status: 'in_progress', error: `done not accepted: ${problem}` },
    claimed: 'done',
    note: problem,
    events,
  };
}

/**
 * The evaluator's stall rules over the state file's digests (status, progress, result) — the same rules as the spec
 * loop's: unchanged for `limit` iterations, a second backtrack (one is tolerated), or the tokens of each iteration
 * climbing while the file does not move.
 */
function noProgress(record: StateFileModeState, limit: number): ModeStop | undefined {
  const tokens = record.tokens ?? [];
  return modeStall(
    record.digests.map((fingerprint, i) => ({ fingerprint, tokens: tokens[i] })),
    limit,
    {
      unchanged: `the state file did not change for ${String(limit)} iterations`,
      subject: 'the state file',
    },
  );
}

/** A result or progress as one line of text: a string as it is, anything else as JSON. */
export function shown(value: unknown): string {
  if (value === undefined || value === null) return '(none)';
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value.join('; ');
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** At a cap (like `/al` at its `max`): the stop names the last progress the state file recorded. */
function withLastProgress(stop: ModeStop, current: AlState | undefined): ModeStop {
  if (stop.state === 'cancelled' || current === undefined) return stop;
  const progress = current.progress;
  if (progress === undefined || progress === null || progress.length === 0) return stop;
  return { ...stop, detail: `${stop.detail}; last progress: ${shown(progress)}` };
}

function finish(state: StateFileProgramState, stop: ModeStop, summary = true): StateFileDecision {
  return { state, action: { kind: 'finish', stop, summary } };
}

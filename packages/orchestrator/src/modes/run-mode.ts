import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  createAgentRunner,
  worstCaseCallUsd,
  type AgentActivity,
  type AgentRunner,
} from '@allium-loop/agents';
import { AlliumLoopError } from '@allium-loop/errors';
import {
  chooseSlug,
  createFileLedgerStore,
  createLedger,
  createRedactor,
  type Caps,
  type HistoryEntry,
  type JournalEvent,
  type Lease,
  type Ledger,
  type LedgerStore,
  type LoopStateRecord,
  type ModeSpec,
} from '@allium-loop/ledger';
import type { BackoffPolicy } from '../driver/port-failure.js';
import { settleJournaledEnd } from '../driver/run-record.js';
import { TERMINAL_EXIT_CODES } from '../terminal-state.js';
import type { ModeContext, ModeProgress } from './mode-context.js';
import { runModeLoop, summarizeMode } from './mode-spec.js';
import { loadPrd } from './story-mode.js';
import { storiesAtJournaledIteration } from './story-resume.js';
import { ignoreStateDir } from '../project/ignore-state-dir.js';
import { withLease } from '../project/with-lease.js';

/** What a mode run needs from the command line. */
export interface ModeRunSettings {
  readonly cwd: string;
  /**
   * The agent configuration (`agentConfigSchema` of `@allium-loop/agents`); stored in the ledger for resumes. On
   * resume, `undefined` keeps the recorded agent and a value replaces it.
   */
  readonly agent: unknown;
  /** Cap overrides; the rest come from the mode's defaults and `DEFAULT_CAPS`. */
  readonly caps: Partial<Caps>;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly signal: AbortSignal;
  readonly clock: { now(): number };
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** How retryable port failures are retried; default `DEFAULT_BACKOFF`. */
  readonly backoff?: BackoffPolicy;
  /** Builds the runner from the configuration; default `createAgentRunner`. */
  readonly createAgent?: (config: unknown) => AgentRunner;
  /** Wraps the run's ledger store (the file store under `.allium-loop/`); tests use it to cut a run short. */
  readonly wrapStore?: (store: LedgerStore) => LedgerStore;
  readonly onProgress?: (progress: ModeProgress) => void;
  /** The running agent call's activity (tool in use, tokens so far), for CLIs that stream it. */
  readonly onActivity?: (activity: AgentActivity) => void;
  /** One-off announcements (slug, resume, lease takeover). */
  readonly announce?: (line: string) => void;
  /**
   * Start the goal's bounds from zero (`--fresh`). Without it a goal's bounds are cumulative: a new run of a goal
   * that ran before continues its tick count, spend and wall clock under the earlier caps (raised by explicit ones).
   */
  readonly fresh?: boolean;
}

/** How a mode run ended: the final ledger, the exit code of its terminal state, and its summary table. */
export interface ModeRunOutcome {
  readonly ledger: Ledger;
  readonly exitCode: number;
  readonly summary: string;
}

/** Raised when a mode run cannot start or resume (no such run, a run of another mode). */
export class ModeRunError extends AlliumLoopError {}

function openModeStore(settings: ModeRunSettings): { store: LedgerStore; dir: string } {
  const dir = join(settings.cwd, '.allium-loop');
  const store = createFileLedgerStore({ dir, redactor: createRedactor(settings.env) });
  return { store: settings.wrapStore?.(store) ?? store, dir };
}

/**
 * Starts a run of one of the loop modes for `goal`, or continues the unfinished run of the same goal and settings.
 * A run of the same goal and mode that ended, or that has other settings, is replaced by a fresh one under the same
 * slug (its journal keeps the history). Holds the lease for the whole run and heartbeats it. Throws `LeaseHeldError`
 * when another process runs it, and `ModeRunError` `modes.slug_taken` when the goal's run is of another mode.
 */
export async function startModeRun(
  goal: string,
  spec: ModeSpec,
  settings: ModeRunSettings,
): Promise<ModeRunOutcome> {
  await ignoreStateDir(settings.cwd, settings.announce);
  const { store, dir } = openModeStore(settings);
  const choice = await chooseSlug(goal, async (slug) => {
    const loaded = await store.load(slug);
    if (loaded.ok) return { kind: 'goal', goal: loaded.value.ledger.goal };
    return loaded.issues.kind === 'missing' ? { kind: 'free' } : { kind: 'unreadable' };
  });
  return withLease(store, choice.slug, settings.announce, async (lease) => {
    const loaded = choice.existing ? await store.load(choice.slug) : undefined;
    if (loaded !== undefined && !loaded.ok && loaded.issues.kind === 'corrupt') throw loaded.issues.error;
    const previous = loaded?.ok === true ? loaded.value.ledger : undefined;
    if (previous !== undefined && previous.mode !== spec.mode)
      throw new ModeRunError(
        `Run "${choice.slug}" of the same goal is a ${previous.mode} run; a ${spec.mode} run would replace it.`,
        {
          code: 'modes.slug_taken',
          context: { slug: choice.slug, mode: previous.mode },
          hint: `Resume it with 'allium-loop resume ${choice.slug}', or word the goal differently.`,
        },
      );
    if (previous?.status === 'running' && sameSpec(previous, spec)) {
      settings.announce?.(`Continuing the unfinished run ${choice.slug} at tick ${String(previous.tick)}.`);
      return driveModeRun(store, lease, dir, previous, settings, true);
    }
    // Bounds are cumulative per goal: a new run of a goal that ran before goes on from what it used, so a shell
    // loop around `allium-loop run --verify …` stays bounded. Explicit caps (a larger --max-ticks) or --fresh raise it.
    const carried = previous !== undefined && settings.fresh !== true ? previous : undefined;
    // The budget pre-flight reserves the worst case of the agent's model unless --max-call-usd sets it.
    const reserve = worstCaseCallUsd(settings.agent);
    const caps = {
      ...spec.defaultCaps,
      ...carried?.caps,
      ...(reserve === undefined ? {} : { reserveUsd: reserve.usd }),
      ...settings.caps,
    };
    const run = { spec, agent: agentRecord(settings.agent) };
    const now = new Date(settings.clock.now());
    const created = createLedger({
      goal,
      slug: choice.slug,
      mode: spec.mode,
      caps,
      now,
      modeState: modeRecord(run),
    });
    const ledger: Ledger =
      carried === undefined
        ? created
        : {
            ...created,
            tick: carried.tick,
            spent: carried.spent,
            history: [...carried.history, carriedBounds(carried, now)],
          };
    await store.save(lease, ledger);
    settings.announce?.(
      `Run ${choice.slug} (${spec.mode} mode)${previous === undefined ? '' : `, replacing the ${previous.status === 'running' ? 'unfinished run of the same goal, which had other settings' : 'ended run of the same goal'}`}.`,
    );
    if (carried !== undefined) settings.announce?.(carriedBounds(carried, now).message);
    return driveModeRun(store, lease, dir, ledger, settings, false);
  });
}

/**
 * Continues a mode run from its ledger alone (the mode, its configuration and the agent are stored there).
 * A run that ended `cancelled`, `timed_out` or `failed` is reopened; other ended runs are reported as they are.
 */
export async function resumeModeRun(slug: string, settings: ModeRunSettings): Promise<ModeRunOutcome> {
  await ignoreStateDir(settings.cwd, settings.announce);
  const { store, dir } = openModeStore(settings);
  return withLease(store, slug, settings.announce, async (lease) => {
    const loaded = await store.load(slug);
    if (!loaded.ok) {
      if (loaded.issues.kind === 'corrupt') throw loaded.issues.error;
      throw new ModeRunError(`No run named "${slug}" in ${dir}.`, {
        code: 'modes.not_found',
        hint: "Run 'allium-loop list' to see the runs here.",
      });
    }
    if (loaded.value.ledger.mode === 'spec')
      throw new ModeRunError(`Run "${slug}" is a spec-loop run, not a mode run.`, {
        code: 'modes.wrong_mode',
      });
    // A process killed between journaling the run's end and saving it: the end stands (it is not run again).
    const journal = (await store.readJournal(slug)).events;
    const ended = await settleJournaledEnd(store, lease, loaded.value.ledger, journal);
    // A stories process killed between journaling an iteration and saving it: the iteration stands.
    const ledger = await settleJournaledIteration(store, lease, ended, journal, settings);
    if (ledger.terminal !== null && !['cancelled', 'timed_out', 'failed'].includes(ledger.terminal.state)) {
      settings.announce?.(`Run ${slug} already ended: ${ledger.terminal.state} (${ledger.terminal.detail}).`);
      return { ledger, exitCode: TERMINAL_EXIT_CODES[ledger.terminal.state], summary: summarizeMode(ledger) };
    }
    settings.announce?.(`Resuming ${slug} (${ledger.mode} mode) at tick ${String(ledger.tick)}.`);
    const reopened = withGivenSettings({ ...ledger, status: 'running', terminal: null }, settings);
    return driveModeRun(store, lease, dir, reopened, settings, true);
  });
}

/**
 * On resume, under the lease: a stories iteration the journal holds and the ledger does not is recorded from the
 * journal (`storiesAtJournaledIteration`), journaled as a `note` and announced; any other ledger is returned as it is.
 */
async function settleJournaledIteration(
  store: LedgerStore,
  lease: Lease,
  ledger: Ledger,
  journal: readonly JournalEvent[],
  settings: ModeRunSettings,
): Promise<Ledger> {
  const record = ledger.modeState;
  if (record.kind !== 'stories' || record.stories === undefined) return ledger;
  const prd = await loadPrd(record.stories.config.prdPath);
  const level = storiesAtJournaledIteration(ledger, journal, prd.ok ? prd.value : undefined);
  if (level === undefined) return ledger;
  const message = `The iteration of tick ${String(ledger.tick)} was journaled by a process that was killed before it saved it: it is recorded from the journal, not worked again.`;
  const at = new Date(settings.clock.now()).toISOString();
  await store.append(lease, [{ type: 'note', at, tick: ledger.tick, message }]);
  await store.save(lease, level);
  settings.announce?.(message);
  return level;
}

/**
 * The agent and caps given again on `resume` replace the recorded ones (and are recorded for later resumes): a run
 * that stopped on a wrong agent setting (a missing binary, a bad command) is corrected by resuming it.
 */
function withGivenSettings(ledger: Ledger, settings: ModeRunSettings): Ledger {
  const record = ledger.modeState;
  if (record.kind === 'spec') return ledger;
  const run =
    settings.agent === undefined ? record.run : { ...record.run, agent: agentRecord(settings.agent) };
  return { ...ledger, caps: { ...ledger.caps, ...settings.caps }, modeState: { ...record, run } };
}

/** The history entry (and announcement) of a run that goes on from the bounds an earlier run of its goal used. */
function carriedBounds(previous: Ledger, at: Date): HistoryEntry {
  const { spent } = previous;
  const usd = spent.usd === null ? '' : `, $${spent.usd.toFixed(2)}`;
  return {
    at: at.toISOString(),
    kind: 'bounds_carried',
    message: `Bounds are cumulative per goal: this run goes on from the ${String(previous.tick)} tick(s)${usd} and ${String(Math.round(spent.wallMs / 1000))} s the earlier run used (${previous.terminal?.state ?? 'unfinished'}); give larger caps (--max-ticks, --budget-usd, --wall-clock) or --fresh to start from zero.`,
    data: {
      ticks: previous.tick,
      usd: spent.usd,
      wallMs: spent.wallMs,
      agentCalls: spent.agentCalls,
      previous: previous.terminal?.state ?? 'running',
    },
  };
}

/** The agent configuration as stored: a JSON object (the agents package validates it when the runner is built). */
function agentRecord(agent: unknown): Record<string, unknown> {
  return typeof agent === 'object' && agent !== null && !Array.isArray(agent)
    ? (JSON.parse(JSON.stringify(agent)) as Record<string, unknown>)
    : {};
}

type ModeRecord = Exclude<LoopStateRecord, { kind: 'spec' }>;

/** A fresh loop state for a mode run: its settings, no mode state yet. */
function modeRecord(run: ModeRecord['run']): ModeRecord {
  switch (run.spec.mode) {
    case 'verify':
      return { kind: 'verify', run };
    case 'stories':
      return { kind: 'stories', run };
    case 'state-file':
      return { kind: 'state-file', run };
  }
}

/** The stored settings of a mode run. */
function storedRun(ledger: Ledger): ModeRecord['run'] {
  const record = ledger.modeState;
  if (record.kind === 'spec')
    throw new ModeRunError(`Run "${ledger.slug}" is a spec-loop run, not a mode run.`, {
      code: 'modes.wrong_mode',
    });
  return record.run;
}

function sameSpec(ledger: Ledger, spec: ModeSpec): boolean {
  return (
    JSON.stringify(storedRun(ledger).spec.config) === JSON.stringify(JSON.parse(JSON.stringify(spec.config)))
  );
}

/** Drives a loop-mode run (verify, stories, state-file) from its ledger. */
async function driveModeRun(
  store: LedgerStore,
  lease: Lease,
  dir: string,
  ledger: Ledger,
  settings: ModeRunSettings,
  resumed: boolean,
): Promise<ModeRunOutcome> {
  const stored = storedRun(ledger);
  const agent = (
    settings.createAgent ??
    ((config) =>
      createAgentRunner(config, {
        env: settings.env,
        ...(settings.onActivity === undefined ? {} : { onActivity: settings.onActivity }),
      }))
  )(stored.agent);
  const at = new Date(settings.clock.now()).toISOString();
  await store.append(lease, [
    {
      type: 'run_started',
      at,
      goal: ledger.goal,
      mode: ledger.mode,
      resumed,
      pid: process.pid,
      host: hostname(),
    },
  ]);
  const context: ModeContext = {
    store,
    lease,
    ledger,
    agent,
    cwd: settings.cwd,
    stateDir: dir,
    env: settings.env,
    clock: settings.clock,
    signal: settings.signal,
    ...(settings.sleep === undefined ? {} : { sleep: settings.sleep }),
    ...(settings.backoff === undefined ? {} : { backoff: settings.backoff }),
    ...(settings.onProgress === undefined ? {} : { onProgress: settings.onProgress }),
  };
  const final = await runModeLoop(context, stored.spec);
  const state = final.terminal?.state ?? 'failed';
  return { ledger: final, exitCode: TERMINAL_EXIT_CODES[state], summary: summarizeMode(final) };
}

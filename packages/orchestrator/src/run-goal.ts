import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  createAgentRunner,
  worstCaseCallUsd,
  type AgentActivity,
  type AgentRunner,
} from '@allium-loop/agents';
import { detectEntry, type EntryPoint } from '@allium-loop/entry';
import { AlliumLoopError } from '@allium-loop/errors';
import { DEFAULT_POLICY } from '@allium-loop/evaluator';
import {
  chooseSlug,
  createFileLedgerStore,
  createLedger,
  createRedactor,
  type Lease,
  type Ledger,
  type LedgerStore,
  type SpecRunConfig,
  type UpstreamLedger,
  UPSTREAM_ADOPTED,
} from '@allium-loop/ledger';
import {
  discoverTestCommand,
  fingerprintHarness,
  loadHarnessRecord,
  parseHarnessRecord,
  probeProject,
  readHarnessConfig,
  saveHarnessRecord,
  VerifyError,
  writeTestCommandConfig,
  type HarnessRecord,
  type TestCommand,
} from '@allium-loop/verify';
import { DEFAULT_CAPS, type LoopCaps, type LoopConfig, type LoopMode } from './decide/loop-state.js';
import type { Clock, LoopPorts } from './driver/loop-ports.js';
import { specRecord } from './driver/ledger-sync.js';
import { runLoop, type LoopProgress } from './driver/run-loop.js';
import { settleJournaledEnd } from './driver/run-record.js';
import { detectDrift, resetToCheckpoint, type DriftPolicy } from './project/drift.js';
import { ignoreStateDir } from './project/ignore-state-dir.js';
import { withLease } from './project/with-lease.js';
import { createProjectPorts, recordSpecBaseline } from './project/project-ports.js';
import { reopenRun } from './runs/reopen-run.js';
import { adoptGeneratedTests, adoptUpstreamLedger } from './adopt-upstream.js';
import { normalizeScope, type Scope } from './runs/scope.js';
import { otherLiveRuns } from './runs/run-overview.js';
import { TERMINAL_EXIT_CODES } from './terminal-state.js';
import { endSliceRun, sliceLoopConfig, sliceRunMark, sliceRunRecord } from './scale-out/slice-run.js';
import { findSlice, type StoredPlan, type StoredSlice } from './scale-out/stored-plan.js';
import { createGitWorktrees } from './parallel/git-worktrees.js';
import type { ParallelSlices } from './parallel/run-wave.js';
import { gitRoot } from './project/git.js';

/** Everything a spec-loop run needs from the command line and the config file. */
export interface RunSettings {
  readonly cwd: string;
  /**
   * The agent's configuration (`agentConfigSchema` of `@allium-loop/agents`), when given (flags or the config
   * file). A new run without one uses Claude Code; `resume` without one keeps the agent the run recorded, and with
   * one replaces it (a wrong agent setting is corrected by resuming with the right one).
   */
  readonly agent?: unknown;
  readonly caps: Partial<LoopCaps> & { readonly agentTimeoutMs?: number; readonly testTimeoutMs?: number };
  readonly strictQuestions: boolean;
  readonly interactive: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly onProgress?: (progress: LoopProgress) => void;
  /** The running agent call's activity (tool in use, tokens so far), for CLIs that stream it. */
  readonly onActivity?: (activity: AgentActivity) => void;
  /** Announces decisions the user should see once (entry path, test command, lease takeover). */
  readonly announce?: (line: string) => void;
  readonly ask?: LoopPorts['ask'];
  /** Asks the user one line on a terminal (absent when not interactive): used when no test command is found. */
  readonly promptLine?: (question: string) => Promise<string | undefined>;
  /** What resume does when the working tree changed since the last tick (default `reverify`). */
  readonly onDrift?: DriftPolicy;
  /** `testCommand` from the config file, when set; otherwise it is discovered. */
  readonly testCommand?: string;
  /**
   * `--scope`: paths (relative to `cwd`) that bound every phase; recorded, so resume keeps it. On resume, given
   * again, it replaces the recorded one. Absent: the whole project (or, on resume, the recorded scope).
   */
  readonly scope?: readonly string[];
  /**
   * `--concurrency N`: slices of a wave that run at once, each in its own git worktree. Recorded when the run
   * starts; given again on resume, it replaces the recorded one. Default 1 (one after another).
   */
  readonly concurrency?: number;
  /**
   * `--stall-warning-ticks N`: flat ticks in a row before the `⚠ tick n · no progress` warning (upstream
   * `stall_warning_ticks`). Given per invocation, not recorded; default 1.
   */
  readonly stallWarningTicks?: number;
}

/** How a run ended, for the CLI: the final ledger and the process exit code. */
export interface RunOutcome {
  readonly ledger: Ledger;
  readonly exitCode: number;
}

/** Raised when a run cannot start: an ended run of the same goal, a missing ledger on resume. */
export class RunError extends AlliumLoopError {}

const AGENT_TIMEOUT_MS = 30 * 60_000;
const TEST_TIMEOUT_MS = 10 * 60_000;

/** The state directory of a project. */
export function stateDir(cwd: string): string {
  return join(cwd, '.allium-loop');
}

/** Opens the project's file ledger store, with redaction built from the environment. */
export function openStore(cwd: string, env: Readonly<Record<string, string | undefined>>): LedgerStore {
  return createFileLedgerStore({ dir: stateDir(cwd), redactor: createRedactor(env) });
}

/**
 * Starts a spec-loop run for `goal` (or continues the unfinished run of the same goal): detects the entry point,
 * discovers the test command, creates the ledger, and drives the loop to a terminal state.
 */
export async function startRun(
  goal: string,
  settings: RunSettings,
  entryOverride?: EntryPoint,
): Promise<RunOutcome> {
  return startSpecRun(goal, settings, entryOverride);
}

/**
 * Runs one slice of a stored plan (`allium-loop run --slice <id> --plan <file>`, a CI matrix job) as a run of its
 * own: a ledger of the plan's goal holding that slice alone, driven by the slice loop (propagate, implement, weed on
 * the slice's constructs) to a terminal state. Run again in the same checkout, it continues the unfinished slice.
 */
export async function startSliceRun(
  plan: StoredPlan,
  sliceId: string,
  settings: RunSettings,
): Promise<RunOutcome> {
  return startSpecRun(plan.goal, settings, undefined, { plan, slice: findSlice(plan, sliceId) });
}

/** A ledger the upstream `/allium` skill wrote, found at `.allium-loop/<slug>.json`, for a run to adopt. */
interface Adoption {
  readonly slug: string;
  readonly ledger: UpstreamLedger;
}

async function startSpecRun(
  goal: string,
  settings: RunSettings,
  entryOverride?: EntryPoint,
  planned?: { readonly plan: StoredPlan; readonly slice: StoredSlice },
  adopt?: Adoption,
): Promise<RunOutcome> {
  await ignoreStateDir(settings.cwd, settings.announce);
  const store = openStore(settings.cwd, settings.env);
  const choice =
    adopt === undefined
      ? await chooseSlug(goal, async (slug) => {
          const loaded = await store.load(slug);
          if (loaded.ok) return { kind: 'goal', goal: loaded.value.ledger.goal };
          if (loaded.issues.kind === 'corrupt' && loaded.issues.upstream !== undefined)
            return { kind: 'goal', goal: loaded.issues.upstream.goal };
          return loaded.issues.kind === 'missing' ? { kind: 'free' } : { kind: 'unreadable' };
        })
      : { slug: adopt.slug, existing: false };
  if (choice.existing) {
    if (planned !== undefined) await refuseOtherSlice(store, choice.slug, planned.slice, settings.cwd);
    return resumeRun(choice.slug, settings, { startedAs: goal });
  }
  // A wrong agent setting is refused here, before anything is recorded: never a run left `running`.
  const agentConfig = settings.agent ?? DEFAULT_AGENT;
  checkAgent(agentConfig, settings, choice.slug);
  const scope = await normalizeScope(settings.cwd, settings.scope ?? []);
  const testCommand = await resolveTestCommand(settings);
  const entry =
    planned === undefined
      ? await detectEntryOf(settings.cwd, goal, entryOverride)
      : {
          entry: 'weed' as const,
          mode: 'spec-first' as const,
          reason: `slice ${planned.slice.id} of stored plan ${planned.plan.id}`,
          announcement: `Slice ${planned.slice.id} (wave ${String(planned.slice.wave)}) of plan ${planned.plan.id}: propagate, implement and weed its ${String(planned.slice.constructs.length)} construct(s).`,
        };
  if (adopt === undefined) settings.announce?.(entry.announcement);
  settings.announce?.(`Tests: ${testCommand.command} (${testCommand.source})`);
  if (scope.length > 0)
    settings.announce?.(`Scope: ${scope.join(', ')} (the phases see and change only these paths).`);
  const harnessConfig = await readHarnessConfig(settings.cwd);
  const harness = await fingerprintHarness({
    cwd: settings.cwd,
    commands: [testCommand.command],
    env: settings.env,
    protect: harnessConfig.protect,
    allowTestChanges: harnessConfig.allowTestChanges,
  });
  return withLease(store, choice.slug, settings.announce, async (lease) => {
    if (adopt !== undefined) await stillUpstream(store, adopt);
    await refuseWhenTreeBusy(store, choice.slug, settings.cwd);
    const caps = loopCaps(settings);
    let ledger: Ledger = {
      ...createLedger({
        goal,
        slug: choice.slug,
        mode: 'spec',
        caps: {
          maxTicks: caps.maxTicks,
          noProgressTicks: caps.noProgressTicks,
          maxFixAttempts: caps.maxFixAttempts,
          agentTimeoutMs: settings.caps.agentTimeoutMs ?? AGENT_TIMEOUT_MS,
          testTimeoutMs: settings.caps.testTimeoutMs ?? TEST_TIMEOUT_MS,
          ...(caps.wallClockMs === undefined ? {} : { wallClockMs: caps.wallClockMs }),
          ...(caps.budgetUsd === undefined ? {} : { budgetUsd: caps.budgetUsd }),
        },
        now: new Date(settings.clock.now()),
      }),
      entry: {
        path: entry.entry,
        mode: adopt?.ledger.mode ?? entry.mode,
        reason:
          adopt === undefined
            ? entry.reason
            : `${adopt.ledger.mode}, adopted from the upstream skill's ledger; ${entry.reason}`,
        overridden: entryOverride !== undefined,
      },
      modeState: {
        kind: 'spec',
        config: {
          caps: { ...caps },
          strictQuestions: settings.strictQuestions,
          testCommand: { ...testCommand },
          agent: JSON.parse(JSON.stringify(agentConfig)) as Record<string, unknown>,
          ...(scope.length === 0 ? {} : { scope: [...scope] }),
          ...(settings.concurrency === undefined ? {} : { concurrency: settings.concurrency }),
        },
        harness: JSON.parse(JSON.stringify(harness)) as Record<string, unknown>,
      },
    };
    if (planned !== undefined) {
      const record = sliceRunRecord(planned.plan, planned.slice, new Date(settings.clock.now()));
      ledger = { ...ledger, subGoals: [record.subGoal], history: [record.history] };
    }
    const adopted =
      adopt === undefined ? undefined : await adoptInto(ledger, adopt, settings, testCommand.command);
    if (adopted !== undefined) ledger = adopted.ledger;
    const outside = await saveHarnessRecord(settings.cwd, choice.slug, harness, settings.env);
    await store.save(lease, ledger);
    await store.append(lease, [
      {
        type: 'run_started',
        at: new Date(settings.clock.now()).toISOString(),
        goal,
        mode: 'spec',
        resumed: adopt !== undefined,
        pid: process.pid,
        host: hostname(),
      },
      ...(adopted === undefined ? [] : [adopted.note]),
      harnessNote(harness, outside, new Date(settings.clock.now()).toISOString()),
    ]);
    await recordSpecBaseline(settings.cwd, choice.slug);
    return driveSpecRun(store, lease, ledger, settings, testCommand, harness);
  });
}

/** Continues a run from its ledger alone, in a fresh process. */
export async function resumeRun(
  slug: string,
  settings: RunSettings,
  options: { readonly startedAs?: string } = {},
): Promise<RunOutcome> {
  await ignoreStateDir(settings.cwd, settings.announce);
  const store = openStore(settings.cwd, settings.env);
  const upstream = await upstreamLedgerAt(store, slug);
  if (upstream !== undefined)
    return startSpecRun(upstream.goal, settings, undefined, undefined, { slug, ledger: upstream });
  return withLease(store, slug, settings.announce, async (lease) => {
    // A process killed between journaling the run's end and saving it: the end stands (it is not run again).
    const recorded = await loadRecordedRun(store, slug, settings.cwd);
    let ledger = await settleJournaledEnd(store, lease, recorded, (await store.readJournal(slug)).events);
    if (ledger.status === 'terminal' && ledger.terminal !== null) {
      const reopened = reopenRun(ledger);
      if (reopened === undefined) {
        settings.announce?.(
          `Run ${slug} already ended: ${ledger.terminal.state} (${ledger.terminal.detail}).`,
        );
        return { ledger, exitCode: TERMINAL_EXIT_CODES[ledger.terminal.state] };
      }
      ledger = reopened;
    }
    await refuseWhenTreeBusy(store, slug, settings.cwd);
    // Settings given again override the recorded ones, checked before the run is marked running again.
    const scope =
      settings.scope === undefined ? undefined : await normalizeScope(settings.cwd, settings.scope);
    ledger = applyGivenSettings(ledger, settings, scope);
    checkAgent(storedConfig(ledger).agent, settings, slug);
    ledger = await handleDrift(ledger, settings);
    settings.announce?.(
      `Resuming ${slug}${options.startedAs === undefined ? '' : ' (same goal as an unfinished run)'} at tick ${String(ledger.tick)}.`,
    );
    await store.append(lease, [
      {
        type: 'run_started',
        at: new Date(settings.clock.now()).toISOString(),
        goal: ledger.goal,
        mode: ledger.mode,
        resumed: true,
        pid: process.pid,
        host: hostname(),
      },
    ]);
    const stored = specRecord(ledger).config;
    const testCommand = stored?.testCommand ?? (await resolveTestCommand(settings));
    // The copy outside the project wins over the ledger's (which an agent can reach).
    const harness =
      (await loadHarnessRecord(settings.cwd, slug, settings.env))?.record ??
      parseHarnessRecord(specRecord(ledger).harness);
    return driveSpecRun(store, lease, ledger, settings, testCommand, harness);
  });
}

/**
 * Loads a recorded run's ledger: throws the store's corrupt-ledger error (naming the file and its backup) or a
 * {@link RunError} `run.not_found` with a hint.
 */
export async function loadRecordedRun(store: LedgerStore, slug: string, cwd: string): Promise<Ledger> {
  const loaded = await store.load(slug);
  if (loaded.ok) return loaded.value.ledger;
  if (loaded.issues.kind === 'corrupt') throw loaded.issues.error;
  throw new RunError(`No run named "${slug}" in ${stateDir(cwd)}.`, {
    code: 'run.not_found',
    hint: "Run 'allium-loop list' to see the runs here.",
  });
}

/** The upstream skill's ledger stored at `slug`, when that is what the file holds. */
async function upstreamLedgerAt(store: LedgerStore, slug: string): Promise<UpstreamLedger | undefined> {
  const loaded = await store.load(slug);
  return !loaded.ok && loaded.issues.kind === 'corrupt' ? loaded.issues.upstream : undefined;
}

/** Under the lease: refuses when the upstream ledger to adopt changed since it was read (another process). */
async function stillUpstream(store: LedgerStore, adopt: Adoption): Promise<void> {
  const now = await upstreamLedgerAt(store, adopt.slug);
  if (now !== undefined && JSON.stringify(now) === JSON.stringify(adopt.ledger)) return;
  throw new RunError(`The ledger of ${adopt.slug} changed while it was being adopted; nothing was written.`, {
    code: 'run.adopt_changed',
    context: { slug: adopt.slug },
    hint: `Run 'allium-loop resume ${adopt.slug}' again.`,
  });
}

/**
 * Adopts the upstream skill's ledger into the fresh ledger of its goal (`adopt-upstream.ts`), says so, and returns
 * the journal note that records it.
 */
async function adoptInto(ledger: Ledger, adopt: Adoption, settings: RunSettings, testCommand: string) {
  const at = new Date(settings.clock.now());
  const { tests, report } = await adoptGeneratedTests(settings.cwd, adopt.slug, adopt.ledger);
  const up = adopt.ledger;
  const skipped = report.skipped.map((s) => `${s.path} (${s.why})`);
  const message =
    `Adopting the ledger the upstream /allium skill wrote (.allium-loop/${adopt.slug}.json): ` +
    `"${up.goal}", ${up.mode}, tick ${String(up.tick)}; ` +
    `${String(up.open_questions?.length ?? 0)} parked question(s), ` +
    `${String(up.completed_sub_goals?.length ?? 0)} completed sub-goal(s), ` +
    `${String(report.protectedPaths.length)} generated test(s) protected` +
    (skipped.length === 0 ? '' : `, not adopted: ${skipped.join(', ')}`) +
    `. Continuing at tick ${String(up.tick + 1)} (tests: ${testCommand}); its upstream fields are kept current.`;
  settings.announce?.(message);
  return {
    ledger: adoptUpstreamLedger(ledger, up, tests, at),
    note: {
      type: 'note' as const,
      at: at.toISOString(),
      message,
      data: {
        kind: UPSTREAM_ADOPTED,
        mode: up.mode,
        tick: up.tick,
        protectedTests: [...report.protectedPaths],
        skippedTests: report.skipped.map((s) => ({ path: s.path, why: s.why })),
      },
    },
  };
}

/** The agent a new run uses when none is given. */
const DEFAULT_AGENT = { kind: 'claude' };

/** The settings a spec run recorded when it started (none for a run that crashed before recording them). */
function storedConfig(ledger: Ledger): Partial<SpecRunConfig> {
  return specRecord(ledger).config ?? {};
}

/**
 * Folds the settings given on `resume` (flags or the config file) into the run: the agent, the caps and the
 * agent and test timeouts replace the recorded ones and are recorded, so they hold for later resumes too.
 */
function applyGivenSettings(ledger: Ledger, settings: RunSettings, scope: Scope | undefined): Ledger {
  const record = specRecord(ledger);
  const stored = storedConfig(ledger);
  const { agentTimeoutMs, testTimeoutMs, ...given } = settings.caps;
  const caps: LoopCaps = { ...(stored.caps ?? loopCaps(settings)), ...given };
  return {
    ...ledger,
    caps: {
      ...ledger.caps,
      maxTicks: caps.maxTicks,
      noProgressTicks: caps.noProgressTicks,
      maxFixAttempts: caps.maxFixAttempts,
      ...(caps.wallClockMs === undefined ? {} : { wallClockMs: caps.wallClockMs }),
      ...(caps.budgetUsd === undefined ? {} : { budgetUsd: caps.budgetUsd }),
      ...(agentTimeoutMs === undefined ? {} : { agentTimeoutMs }),
      ...(testTimeoutMs === undefined ? {} : { testTimeoutMs }),
    },
    modeState: {
      ...record,
      ...(record.config === undefined
        ? {}
        : {
            config: {
              ...record.config,
              caps: { ...caps },
              agent: JSON.parse(JSON.stringify(settings.agent ?? record.config.agent)) as Record<
                string,
                unknown
              >,
              ...(scope === undefined ? {} : { scope: [...scope] }),
              ...(settings.concurrency === undefined ? {} : { concurrency: settings.concurrency }),
            },
          }),
    },
  };
}

/** The journal note that says what the run fingerprinted and where the record is kept. */
function harnessNote(harness: HarnessRecord, outside: string | undefined, at: string) {
  const allowed =
    harness.allowTestChanges.length === 0
      ? ''
      : `; test changes allowed by allowTestChanges: ${harness.allowTestChanges.join(', ')}`;
  return {
    type: 'note' as const,
    at,
    message: `harness fingerprinted: ${String(harness.entries.length)} entr${harness.entries.length === 1 ? 'y' : 'ies'} (${harness.entries.map((e) => e.label).join(', ')}); record ${outside ?? 'in the ledger only (no HOME or XDG_STATE_HOME)'}${allowed}`,
    data: {
      kind: 'harness_recorded',
      entries: harness.entries.length,
      allowTestChanges: [...harness.allowTestChanges],
    },
  };
}

/** Builds the agent runner once to validate its configuration; a wrong setting throws before any write. */
function checkAgent(agent: unknown, settings: RunSettings, slug: string): AgentRunner {
  try {
    return createAgentRunner(withRunDefaults(agent, settings.cwd, slug), {
      env: settings.env,
      ...(settings.onActivity === undefined ? {} : { onActivity: settings.onActivity }),
    });
  } catch (error) {
    if (!AlliumLoopError.is(error)) throw error;
    const kind =
      typeof agent === 'object' && agent !== null ? (agent as Record<string, unknown>)['kind'] : undefined;
    throw new RunError(`The agent setting is wrong (agent ${JSON.stringify(kind)}): ${error.message}`, {
      code: 'run.agent_invalid',
      cause: error,
      context: { slug },
      hint: `Nothing was changed: fix the agent flags (e.g. --agent claude, or --agent command --agent-command "prog {prompt_file} {result_file}") and run again, or resume with them: allium-loop resume ${slug} --agent …${error.hint === undefined ? '' : ` ${error.hint}`}`,
    });
  }
}

/**
 * Refuses to drive a run while another goal's supervisor is alive in the same project: two loops editing one
 * working tree would undo each other's work and checkpoint each other's edits. Checked once this run's own lease
 * is held, so two starting at once cannot both pass.
 */
async function refuseWhenTreeBusy(store: LedgerStore, slug: string, cwd: string): Promise<void> {
  const [other] = await otherLiveRuns(store, slug);
  if (other === undefined) return;
  const holder = other.holder;
  throw new RunError(
    `Another goal is already running in ${cwd}: ${other.slug} ("${other.ledger.goal}")${holder === undefined ? '' : `, driven by pid ${String(holder.pid)} on ${holder.host}`}.`,
    {
      code: 'run.tree_busy',
      context: { slug, other: other.slug },
      hint: `Two loops in one working tree would overwrite each other's edits. Wait for ${other.slug} to end (allium-loop status ${other.slug}) or stop it with Ctrl-C, then run again; or use a separate git worktree.`,
    },
  );
}

async function detectEntryOf(cwd: string, goal: string, entryOverride?: EntryPoint) {
  const probe = await probeProject({ cwd, hasTestCommand: true });
  return detectEntry(
    { specFiles: probe.specFiles, hasCode: probe.hasCode, hasTestCommand: true },
    goal,
    entryOverride,
  );
}

/** A second `run --slice` in one checkout continues its own slice; another slice (or a normal run) is refused. */
async function refuseOtherSlice(
  store: LedgerStore,
  slug: string,
  slice: StoredSlice,
  cwd: string,
): Promise<void> {
  const loaded = await store.load(slug);
  const mark = loaded.ok ? sliceRunMark(loaded.value.ledger) : undefined;
  if (mark?.slice.id === slice.id) return;
  throw new RunError(
    `This checkout already holds run ${slug} of the same goal${mark === undefined ? '' : ` for slice ${mark.slice.id}`}; it cannot also run slice ${slice.id}.`,
    {
      code: 'run.slice_conflict',
      context: { slug, slice: slice.id },
      hint: `Run each slice in a fresh checkout (one CI job per slice), or remove ${join(stateDir(cwd), `${slug}.json`)} if that run is no longer wanted.`,
    },
  );
}

/** Drives a spec-loop run from its ledger: builds the config, the agent and the project ports, then runs the loop. */
async function driveSpecRun(
  store: LedgerStore,
  lease: Lease,
  ledger: Ledger,
  settings: RunSettings,
  testCommand: TestCommand,
  harness?: HarnessRecord,
): Promise<RunOutcome> {
  let current = ledger;
  const stored = storedConfig(ledger);
  // Caps recorded when the run started hold across resumes; caps given again were folded in on resume.
  const caps: LoopCaps = stored.caps ?? loopCaps(settings);
  const entry = ledger.entry ?? { path: 'weed', mode: 'spec-first' as const };
  const mode: LoopMode = entry.mode;
  const config: LoopConfig = {
    entry: entry.path,
    mode,
    caps,
    policy: {
      ...DEFAULT_POLICY,
      strictQuestions: stored.strictQuestions ?? settings.strictQuestions,
      codeFirst: mode === 'code-first',
    },
    interactive: settings.interactive,
    decompose: mode === 'spec-first',
    ...(settings.stallWarningTicks === undefined ? {} : { stallWarningTicks: settings.stallWarningTicks }),
  };
  // A run started by `run --slice` runs that slice's loop alone.
  const mark = sliceRunMark(ledger);
  const agent = checkAgent(stored.agent ?? settings.agent ?? DEFAULT_AGENT, settings, ledger.slug);
  const redactor = createRedactor(settings.env);
  const portsIn = (cwd: string, read: () => Ledger) =>
    createProjectPorts({
      cwd,
      slug: ledger.slug,
      goal: ledger.goal,
      mode,
      agent,
      testCommand,
      ...(harness === undefined ? {} : { harness }),
      agentTimeoutMs: ledger.caps.agentTimeoutMs,
      testTimeoutMs: ledger.caps.testTimeoutMs,
      ledger: read,
      redact: (text) => redactor.text(text),
      env: settings.env,
      ...(settings.ask === undefined ? {} : { ask: settings.ask }),
      scope: stored.scope ?? [],
    });
  const ports = portsIn(settings.cwd, () => current);
  const parallel = await parallelSlices(settings.cwd, ledger, stored.concurrency ?? 1, portsIn);
  let final = await runLoop({
    store,
    lease,
    ledger,
    config: mark === undefined ? config : sliceLoopConfig(config),
    ...(mark === undefined ? {} : { slice: mark.slice }),
    ...(parallel === undefined || mark !== undefined ? {} : { parallel }),
    ports,
    clock: settings.clock,
    signal: settings.signal,
    onLedger: (next) => {
      current = next;
    },
    ...(settings.onProgress === undefined ? {} : { onProgress: settings.onProgress }),
  });
  const ended =
    mark === undefined ? undefined : endSliceRun(final, mark.slice.id, new Date(settings.clock.now()));
  if (ended !== undefined) {
    await store.append(lease, [ended.event]);
    await store.save(lease, ended.ledger);
    final = ended.ledger;
  }
  const state = final.terminal?.state ?? 'failed';
  return { ledger: final, exitCode: TERMINAL_EXIT_CODES[state] };
}

/**
 * What the driver needs to run slices at once: worktrees over git. Given whenever the project is in git, so that a
 * wave started at once is finished that way (and its worktrees cleaned up) even when resumed with `--concurrency 1`;
 * the driver runs slices at once only with N > 1 or such an unfinished wave. `undefined` outside git, where N > 1 is
 * refused.
 */
async function parallelSlices(
  cwd: string,
  ledger: Ledger,
  concurrency: number,
  portsIn: ParallelSlices['portsFor'],
): Promise<ParallelSlices | undefined> {
  if (concurrency <= 1 && (await gitRoot(cwd)) === undefined) return undefined;
  return {
    concurrency,
    workspaces: await createGitWorktrees(cwd, ledger.slug),
    portsFor: portsIn,
  };
}

/**
 * The replay agent counts its calls per phase in a state file; one per run (not per slice folder) so that slice
 * loops continue the script instead of restarting it.
 */
function withRunDefaults(agent: unknown, cwd: string, slug: string): unknown {
  if (typeof agent !== 'object' || agent === null) return agent;
  const config = agent as Record<string, unknown>;
  if (config['kind'] !== 'replay' || config['stateFile'] !== undefined) return agent;
  return { ...config, stateFile: join(stateDir(cwd), slug, 'replay-state.json') };
}

function loopCaps(settings: RunSettings): LoopCaps {
  const { agentTimeoutMs: _agent, testTimeoutMs: _test, ...caps } = settings.caps;
  // The budget pre-flight reserves the worst case of the agent's model unless --max-call-usd sets it.
  const reserve = worstCaseCallUsd(settings.agent ?? DEFAULT_AGENT);
  return { ...DEFAULT_CAPS, ...(reserve === undefined ? {} : { reserveUsd: reserve.usd }), ...caps };
}

async function resolveTestCommand(settings: RunSettings): Promise<TestCommand> {
  if (settings.testCommand !== undefined) {
    return {
      command: settings.testCommand,
      source: 'allium-loop.yaml testCommand',
      reason: 'configured',
    } as TestCommand;
  }
  try {
    return await discoverTestCommand(settings.cwd);
  } catch (error) {
    if (
      !VerifyError.is(error) ||
      error.code !== 'verify.no_test_command' ||
      settings.promptLine === undefined
    )
      throw error;
    // Asked once: the answer is remembered in allium-loop.yaml, so the next run finds it.
    const answer = (
      (await settings.promptLine('No test command found. Which command runs your tests? ')) ?? ''
    ).trim();
    if (answer === '') throw error;
    await writeTestCommandConfig(settings.cwd, answer);
    settings.announce?.(`Saved testCommand: ${answer} in allium-loop.yaml.`);
    return {
      command: answer,
      source: 'allium-loop.yaml testCommand',
      reason: 'asked on the terminal',
    } as TestCommand;
  }
}

/**
 * Announces drift since the last checkpoint and applies the policy: `stop` refuses to continue, `reset` restores
 * the checkpoint's files, `reverify` (the default) continues and makes sure this tick is measured again.
 */
async function handleDrift(ledger: Ledger, settings: RunSettings): Promise<Ledger> {
  const drift = await detectDrift(settings.cwd, ledger);
  if (drift === undefined) return ledger;
  const policy = settings.onDrift ?? 'reverify';
  settings.announce?.(
    `The working tree changed since tick ${String(drift.tick)} was recorded (${drift.recordedTree.slice(0, 8)} → ${drift.currentTree.slice(0, 8)}); --on-drift ${policy}.`,
  );
  if (policy === 'stop') {
    throw new RunError(
      `Run ${ledger.slug} stopped: the working tree drifted since its last checkpoint (${drift.ref}).`,
      {
        code: 'run.drift',
        context: { slug: ledger.slug, ref: drift.ref },
        hint: `Resume with --on-drift reverify to re-check from here, or --on-drift reset to restore ${drift.ref}.`,
      },
    );
  }
  if (policy === 'reset') {
    await resetToCheckpoint(settings.cwd, drift);
    settings.announce?.(`Restored the files of ${drift.ref}.`);
  }
  const record = specRecord(ledger);
  const loop = record.loop;
  if (loop === undefined || !['weed', 'evaluate'].includes(loop.stage)) return ledger;
  return { ...ledger, modeState: { ...record, loop: { ...loop, stage: 'measure' } } };
}

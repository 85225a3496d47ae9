import { hostname } from 'node:os';
import { join } from 'node:path';
import { createAgentRunner, type AgentRunner } from '@allium-loop/agents';
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
import { detectDrift, resetToCheckpoint, type DriftPolicy } from './project/drift.js';
import { ignoreStateDir } from './project/ignore-state-dir.js';
import { withLease } from './project/with-lease.js';
import { createProjectPorts, recordSpecBaseline } from './project/project-ports.js';
import { TERMINAL_EXIT_CODES } from './terminal-state.js';

/** Everything a spec-loop run needs from the command line and the config file. */
export interface RunSettings {
  readonly cwd: string;
  /** The agent's configuration (`agentConfigSchema` of `@allium-loop/agents`). */
  readonly agent: unknown;
  readonly caps: Partial<LoopCaps> & { readonly agentTimeoutMs?: number; readonly testTimeoutMs?: number };
  readonly strictQuestions: boolean;
  readonly interactive: boolean;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly signal: AbortSignal;
  readonly clock: Clock;
  readonly onProgress?: (progress: LoopProgress) => void;
  /** Announces decisions the user should see once (entry path, test command, lease takeover). */
  readonly announce?: (line: string) => void;
  readonly ask?: LoopPorts['ask'];
  /** Asks the user one line on a terminal (absent when not interactive): used when no test command is found. */
  readonly promptLine?: (question: string) => Promise<string | undefined>;
  /** What resume does when the working tree changed since the last tick (default `reverify`). */
  readonly onDrift?: DriftPolicy;
  /** `testCommand` from the config file, when set; otherwise it is discovered. */
  readonly testCommand?: string;
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
  await ignoreStateDir(settings.cwd, settings.announce);
  const store = openStore(settings.cwd, settings.env);
  const choice = await chooseSlug(goal, async (slug) => {
    const loaded = await store.load(slug);
    if (loaded.ok) return { kind: 'goal', goal: loaded.value.ledger.goal };
    return loaded.issues.kind === 'missing' ? { kind: 'free' } : { kind: 'unreadable' };
  });
  if (choice.existing) return resumeRun(choice.slug, settings, { startedAs: goal });
  const testCommand = await resolveTestCommand(settings);
  const probe = await probeProject({ cwd: settings.cwd, hasTestCommand: true });
  const entry = detectEntry(
    { specFiles: probe.specFiles, hasCode: probe.hasCode, hasTestCommand: true },
    goal,
    entryOverride,
  );
  settings.announce?.(entry.announcement);
  settings.announce?.(`Tests: ${testCommand.command} (${testCommand.source})`);
  const harnessConfig = await readHarnessConfig(settings.cwd);
  const harness = await fingerprintHarness({
    cwd: settings.cwd,
    commands: [testCommand.command],
    env: settings.env,
    protect: harnessConfig.protect,
    allowTestChanges: harnessConfig.allowTestChanges,
  });
  return withLease(store, choice.slug, settings.announce, async (lease) => {
    const caps = loopCaps(settings);
    const ledger: Ledger = {
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
        mode: entry.mode,
        reason: entry.reason,
        overridden: entryOverride !== undefined,
      },
      modeState: {
        kind: 'spec',
        config: {
          caps: { ...caps },
          strictQuestions: settings.strictQuestions,
          testCommand: { ...testCommand },
          agent: JSON.parse(JSON.stringify(settings.agent ?? {})) as Record<string, unknown>,
        },
        harness: JSON.parse(JSON.stringify(harness)) as Record<string, unknown>,
      },
    };
    const outside = await saveHarnessRecord(settings.cwd, choice.slug, harness, settings.env);
    await store.save(lease, ledger);
    await store.append(lease, [
      {
        type: 'run_started',
        at: new Date(settings.clock.now()).toISOString(),
        goal,
        mode: 'spec',
        resumed: false,
        pid: process.pid,
        host: hostname(),
      },
      harnessNote(harness, outside, new Date(settings.clock.now()).toISOString()),
    ]);
    await recordSpecBaseline(settings.cwd, choice.slug);
    return drive(store, lease, ledger, settings, testCommand, harness);
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
  return withLease(store, slug, settings.announce, async (lease) => {
    const loaded = await store.load(slug);
    if (!loaded.ok) {
      if (loaded.issues.kind === 'corrupt') throw loaded.issues.error;
      throw new RunError(`No run named "${slug}" in ${stateDir(settings.cwd)}.`, {
        code: 'run.not_found',
        hint: "Run 'allium-loop list' to see the runs here.",
      });
    }
    let ledger = loaded.value.ledger;
    if (ledger.status === 'terminal' && ledger.terminal !== null) {
      const reopened = reopen(ledger);
      if (reopened === undefined) {
        settings.announce?.(
          `Run ${slug} already ended: ${ledger.terminal.state} (${ledger.terminal.detail}).`,
        );
        return { ledger, exitCode: TERMINAL_EXIT_CODES[ledger.terminal.state] };
      }
      ledger = reopened;
    }
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
    return drive(store, lease, ledger, settings, testCommand, harness);
  });
}

/**
 * A terminal run that can go on: `awaiting_input` once its questions are answered, and `cancelled`, `timed_out`
 * or `failed` (the user chose to resume). Converged, max_ticks, no_progress and budget_exhausted stay ended.
 */
export function reopen(ledger: Ledger): Ledger | undefined {
  const state = ledger.terminal?.state;
  const record = specRecord(ledger);
  const loop = record.loop;
  if (loop === undefined || state === undefined) return undefined;
  const resumable = ['awaiting_input', 'cancelled', 'timed_out', 'failed'];
  if (!resumable.includes(state)) return undefined;
  const answered = ledger.questions.filter((q) => q.status === 'answered').map((q) => q.id);
  const unanswered = ledger.questions.some((q) => q.classification === 'blocking' && q.status === 'open');
  // Waiting on questions: resume once they are answered. Escalated for another reason (failed fix attempts):
  // the user has stepped in, so the next tick measures again.
  if (state === 'awaiting_input' && answered.length === 0 && unanswered) return undefined;
  const { terminal: _terminal, ...rest } = loop;
  const stage =
    answered.length > 0
      ? 'gather'
      : rest.stage === 'done' || state === 'awaiting_input'
        ? 'tick_start'
        : rest.stage;
  return {
    ...ledger,
    status: 'running',
    terminal: null,
    modeState: {
      ...record,
      loop: { ...rest, stage, ...(state === 'awaiting_input' ? { answered, blocking: [] } : {}) },
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

async function drive(
  store: LedgerStore,
  lease: Lease,
  ledger: Ledger,
  settings: RunSettings,
  testCommand: TestCommand,
  harness?: HarnessRecord,
): Promise<RunOutcome> {
  let current = ledger;
  const stored = specRecord(ledger).config;
  // Caps recorded when the run started hold across resumes; caps given again now (flags, config) override them.
  const { agentTimeoutMs: _agent, testTimeoutMs: _test, ...given } = settings.caps;
  const caps: LoopCaps = { ...(stored?.caps ?? loopCaps(settings)), ...given };
  const entry = ledger.entry ?? { path: 'weed', mode: 'spec-first' as const };
  const mode: LoopMode = entry.mode;
  const config: LoopConfig = {
    entry: entry.path,
    mode,
    caps,
    policy: {
      ...DEFAULT_POLICY,
      strictQuestions: stored?.strictQuestions ?? settings.strictQuestions,
      codeFirst: mode === 'code-first',
    },
    interactive: settings.interactive,
    decompose: mode === 'spec-first',
  };
  const agent: AgentRunner = createAgentRunner(
    withRunDefaults(stored?.agent ?? settings.agent, settings.cwd, ledger.slug),
    {
      env: settings.env,
    },
  );
  const redactor = createRedactor(settings.env);
  const ports = createProjectPorts({
    cwd: settings.cwd,
    slug: ledger.slug,
    goal: ledger.goal,
    mode,
    agent,
    testCommand,
    ...(harness === undefined ? {} : { harness }),
    agentTimeoutMs: ledger.caps.agentTimeoutMs,
    testTimeoutMs: ledger.caps.testTimeoutMs,
    ledger: () => current,
    redact: (text) => redactor.text(text),
    ...(settings.ask === undefined ? {} : { ask: settings.ask }),
  });
  const final = await runLoop({
    store,
    lease,
    ledger,
    config,
    ports,
    clock: settings.clock,
    signal: settings.signal,
    onLedger: (next) => {
      current = next;
    },
    ...(settings.onProgress === undefined ? {} : { onProgress: settings.onProgress }),
  });
  const state = final.terminal?.state ?? 'failed';
  return { ledger: final, exitCode: TERMINAL_EXIT_CODES[state] };
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
  return { ...DEFAULT_CAPS, ...caps };
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

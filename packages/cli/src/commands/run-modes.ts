import { terminalCauseLine } from '../render/render-report.js';
import { resolve } from 'node:path';
import type { AgentRunner } from '@allium-loop/agents';
import { AlliumLoopError, formatError } from '@allium-loop/errors';
import { createRedactor } from '@allium-loop/ledger';
import {
  DEFAULT_LOOP_MODE,
  loadPrd,
  openStore,
  recordedLoop,
  readAlState,
  readLoopConfig,
  scopeBudgetsFor,
  resumeModeRun as resumeModeRun_,
  startModeRun,
  type ModeRunOutcome,
  type ModeRunSettings,
  type ModeSpec,
} from '@allium-loop/orchestrator';
import type { CliIo } from '../cli-io.js';
import type { Config } from '../config/config-schema.js';
import { ExitCode } from '../exit-codes.js';
import type { ProgressRenderer } from '../progress/progress-renderer.js';
import {
  FLAG_DEFAULTS,
  FlagError,
  numberFlag,
  RUN_FLAG_SCHEMA,
  type ParsedRunFlags,
  type RunFlag,
  type RunFlagValues,
} from './run-flags.js';
import {
  agentFromFlags,
  capsFromFlags,
  outputMode,
  parseOrReport,
  progressFor,
  readConfig,
} from './run-options.js';

/** Settings from `allium-loop.yaml` that modes honour: the agent and the caps (flags override them). */
export type ModeConfigDefaults = Pick<Config, 'agent' | 'caps'>;

/** What {@link runModeRun} may be given besides its flags and io. */
export interface RunModeDeps {
  /** Aborted on Ctrl-C / SIGTERM: the run ends `cancelled` (exit 130). */
  readonly signal?: AbortSignal;
  /** The config file's values; flags override them. */
  readonly config?: ModeConfigDefaults;
  /** Builds the agent runner from its configuration (tests); default `createAgentRunner`. */
  readonly createAgent?: (config: unknown) => AgentRunner;
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Default state file of `--state-file` given without a path. */
export const DEFAULT_STATE_FILE = FLAG_DEFAULTS.stateFile;

/**
 * `allium-loop run` with flags already parsed by the one flag pipeline and naming a loop mode: builds the mode's
 * spec and settings and runs it, returning the exit code of its terminal state, or 2 on a usage error.
 */
export async function runModeRun(parsed: ParsedRunFlags, io: CliIo, deps: RunModeDeps = {}): Promise<number> {
  // The `/al` arguments (`--state-file workdir=<path> max=<N>`) are flags by now: the flag pipeline folds them.
  if (parsed.positionals.length > 1) {
    io.stderr(
      `allium-loop run: one goal expected, got ${String(parsed.positionals.length)}: ${parsed.positionals.map((p) => `"${p}"`).join(' ')}\n`,
    );
    return ExitCode.usage;
  }
  const config = deps.config ?? (await readConfig(io, 'run'));
  if (config === undefined) return ExitCode.usage;
  const progress = progressFor(io, outputMode(parsed.values));
  let plan: { goal: string; spec: ModeSpec; settings: ModeRunSettings };
  try {
    plan = await planModeRun(parsed.values, parsed.positionals[0], io, { ...deps, config }, progress);
  } catch (error) {
    progress.close();
    if (error instanceof FlagError) {
      io.stderr(`allium-loop run: ${error.message}\n`);
      return ExitCode.usage;
    }
    if (AlliumLoopError.is(error) && error.code.startsWith('modes.')) {
      io.stderr(`allium-loop run: ${formatError(error)}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  return report(io, progress, () => startModeRun(plan.goal, plan.spec, plan.settings));
}

/**
 * Test entry: parses `args` with the one flag pipeline and runs the mode they name; `undefined` when they name none
 * (the spec loop runs then), 2 on a usage error.
 */
export async function runModeCommand(
  args: readonly string[],
  io: CliIo,
  deps: RunModeDeps = {},
): Promise<number | undefined> {
  const parsed = parseOrReport(args, io, 'run');
  if (parsed === undefined) return ExitCode.usage;
  if (parsed.loop === 'spec') return undefined;
  return runModeRun(parsed, io, deps);
}

async function report(
  io: CliIo,
  progress: ProgressRenderer,
  start: () => Promise<ModeRunOutcome>,
): Promise<number> {
  let outcome: ModeRunOutcome;
  try {
    outcome = await start();
  } catch (error) {
    progress.close();
    if (!AlliumLoopError.is(error)) throw error;
    io.stderr(`allium-loop run: ${formatError(error)}\n`);
    return ExitCode.failure;
  }
  progress.close();
  const terminal = outcome.ledger.terminal;
  progress.report(
    `\n${outcome.summary}${terminal === null ? '' : `${terminal.state}: ${terminal.detail}\n${terminalCauseLine(terminal)}`}`,
  );
  return outcome.exitCode;
}

/**
 * `allium-loop resume <slug>` for a run of one of the loop modes: returns `undefined` when the slug names no
 * readable run, or a spec-loop run (the spec loop resumes it then); otherwise continues the mode run from its ledger
 * (its mode and configuration are stored there) and returns the exit code. The agent and the caps given again
 * (flags, or `allium-loop.yaml`) replace the recorded ones, checked before the run is touched: a run stopped by a
 * wrong agent setting is corrected by resuming it with the right one. Spec-loop flags are usage errors.
 */
export async function resumeModeRun(
  slug: string,
  parsed: ParsedRunFlags,
  io: CliIo,
  deps: RunModeDeps = {},
): Promise<number | undefined> {
  if (!SLUG.test(slug)) return undefined;
  const mode = await recordedLoop(openStore(io.cwd, io.env), slug);
  if (mode === undefined || mode === 'spec') return undefined;
  const foreign = (Object.keys(parsed.values) as RunFlag[]).filter(
    (flag) => RUN_FLAG_SCHEMA[flag].scope !== 'all',
  );
  if (foreign.length > 0) {
    io.stderr(
      `allium-loop resume: ${foreign.map((f) => `--${f}`).join(' ')} ${foreign.length === 1 ? 'belongs' : 'belong'} to the spec loop; ${slug} is a ${mode} run (it takes the agent, cap and output flags).\n`,
    );
    return ExitCode.usage;
  }
  const config = deps.config ?? (await readConfig(io, 'resume'));
  if (config === undefined) return ExitCode.usage;
  const progress = progressFor(io, outputMode(parsed.values));
  let settings: ModeRunSettings;
  try {
    settings = modeSettings(parsed.values, io, { ...deps, config }, progress, undefined);
  } catch (error) {
    progress.close();
    if (!(error instanceof FlagError)) throw error;
    io.stderr(`allium-loop resume: ${error.message}\n`);
    return ExitCode.usage;
  }
  return report(io, progress, () => resumeModeRun_(slug, settings));
}

/**
 * A mode run's settings from the flags over `allium-loop.yaml`: the agent (`fallback` when neither names one) and
 * the caps. Throws {@link FlagError} on a wrong agent setting or cap.
 */
function modeSettings(
  values: RunFlagValues,
  io: CliIo,
  deps: RunModeDeps,
  progress: ProgressRenderer,
  fallback: unknown,
): ModeRunSettings {
  return {
    cwd: io.cwd,
    agent: agentFromFlags(values, deps.config?.agent, io.cwd) ?? fallback,
    caps: capsFromFlags(values, deps.config?.caps),
    env: io.env,
    signal: deps.signal ?? io.signal ?? new AbortController().signal,
    clock: { now: deps.now ?? io.now ?? (() => Date.now()) },
    ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
    ...(deps.createAgent === undefined ? {} : { createAgent: deps.createAgent }),
    onProgress: progress.mode,
    onActivity: progress.activity,
    announce: progress.announce,
  };
}

/** Test entry: `resume <slug> [--json]` for a mode run; `undefined` for no run or a spec-loop run. */
export async function resumeModeCommand(
  args: readonly string[],
  io: CliIo,
  deps: RunModeDeps = {},
): Promise<number | undefined> {
  const parsed = parseOrReport(args, io, 'resume');
  if (parsed === undefined) return ExitCode.usage;
  const slug = parsed.positionals[0];
  return slug === undefined ? undefined : resumeModeRun(slug, parsed, io, deps);
}

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

async function planModeRun(
  values: RunFlagValues,
  goal: string | undefined,
  io: CliIo,
  deps: RunModeDeps,
  progress: ProgressRenderer,
) {
  const spec = await withLoopConfig(buildSpec(values, goal, io), values, io);
  await checkModeInputs(spec);
  const settings: ModeRunSettings = {
    ...modeSettings(values, io, deps, progress, { kind: 'claude' }),
    ...(values.fresh === true ? { fresh: true } : {}),
  };
  // The goal is redacted once, here: the ledger, the prompts and every echo of it see the same text.
  return { goal: createRedactor(io.env).text(await resolveGoal(spec, goal)), spec, settings };
}

/**
 * `--stories` in a project with an agent-loop `.loop/config.json`: its `mode` and scope budgets go into the run's
 * configuration, and its `evalRetries`, `skipEval` and `maxIterations` apply where no flag sets them (flags win;
 * `maxIterations` is the default of `--max-ticks`). A config that cannot be read is a usage error.
 */
async function withLoopConfig(spec: ModeSpec, values: RunFlagValues, io: CliIo): Promise<ModeSpec> {
  if (spec.mode !== 'stories') return spec;
  const read = await readLoopConfig(io.cwd);
  if (!read.ok) throw new FlagError(`invalid .loop/config.json:\n  ${read.issues.join('\n  ')}`);
  const loop = read.value;
  if (loop === undefined) return spec;
  const mode = loop.mode ?? DEFAULT_LOOP_MODE;
  return {
    ...spec,
    config: {
      ...spec.config,
      evalRetries: numberFlag(values, 'eval-retries') ?? loop.evalRetries ?? spec.config.evalRetries,
      skipEval: values['skip-eval'] === true || loop.skipEval === true,
      loop: { mode, scopeBudgets: scopeBudgetsFor(loop, mode) },
    },
    defaultCaps: {
      ...spec.defaultCaps,
      ...(loop.maxIterations === undefined ? {} : { maxTicks: loop.maxIterations }),
    },
  };
}

/** A PRD is validated before anything starts: a bad one is a usage error naming the file and each issue. */
async function checkModeInputs(spec: ModeSpec): Promise<void> {
  if (spec.mode !== 'stories') return;
  const loaded = await loadPrd(spec.config.prdPath);
  if (!loaded.ok) throw new FlagError(`invalid PRD:\n  ${loaded.issues.join('\n  ')}`);
  const id = spec.config.storyId;
  if (id !== undefined && !loaded.value.userStories.some((story) => story.id === id))
    throw new FlagError(
      `--story ${id}: no such story in ${spec.config.prdPath} (ids: ${loaded.value.userStories.map((s) => s.id).join(', ')}).`,
    );
}

function buildSpec(values: RunFlagValues, goal: string | undefined, io: CliIo): ModeSpec {
  const climbing = values.hillclimb === true;
  if (!climbing && (values.score !== undefined || values.minimize === true || values.target !== undefined))
    throw new FlagError('--score, --minimize and --target need --hillclimb.');
  if (
    values.stories === undefined &&
    (values.story !== undefined || values['skip-eval'] === true || values['eval-retries'] !== undefined)
  )
    throw new FlagError('--story, --skip-eval and --eval-retries need --stories <prd.json>.');
  if (values.stories !== undefined) return storiesSpec(values, io);
  if (values['state-file'] !== undefined)
    return {
      mode: 'state-file',
      config: { path: resolve(io.cwd, values['state-file']) },
      defaultCaps: { maxTicks: FLAG_DEFAULTS.modeMaxTicks['state-file'] },
    };
  if (goal === undefined || goal.trim() === '')
    throw new FlagError('--verify needs a goal: allium-loop run "<goal>" --verify "<command>".');
  return {
    mode: 'verify',
    config: verifyConfig(values),
    defaultCaps: { maxTicks: FLAG_DEFAULTS.modeMaxTicks.verify },
  };
}

function verifyConfig(values: RunFlagValues) {
  const command = values.verify ?? '';
  if (command.trim() === '') throw new FlagError('--verify needs a command.');
  const intervalMs = Math.round((numberFlag(values, 'interval') ?? FLAG_DEFAULTS.intervalSeconds) * 1000);
  if (values.hillclimb !== true) return { command, intervalMs };
  const score = values.score;
  if (score === undefined)
    throw new FlagError('--hillclimb needs --score "<regex>" to read the score from the output.');
  try {
    new RegExp(score);
  } catch (error) {
    throw new FlagError(`--score is not a valid regular expression: ${(error as Error).message}`);
  }
  const target = numberFlag(values, 'target');
  return {
    command,
    intervalMs,
    hillclimb: {
      score,
      direction: values.minimize === true ? ('min' as const) : ('max' as const),
      ...(target === undefined ? {} : { target }),
    },
  };
}

function storiesSpec(values: RunFlagValues, io: CliIo): ModeSpec {
  const verify = values.verify;
  if (verify?.trim() === '') throw new FlagError('--verify needs a command.');
  return {
    mode: 'stories',
    config: {
      prdPath: resolve(io.cwd, values.stories!),
      evalRetries: numberFlag(values, 'eval-retries') ?? FLAG_DEFAULTS.evalRetries,
      skipEval: values['skip-eval'] === true,
      ...(values.story === undefined ? {} : { storyId: values.story }),
      ...(verify === undefined ? {} : { verifyCommand: verify }),
    },
    defaultCaps: { maxTicks: FLAG_DEFAULTS.modeMaxTicks.stories },
  };
}

async function resolveGoal(spec: ModeSpec, goal: string | undefined): Promise<string> {
  if (goal !== undefined && goal.trim() !== '') return goal;
  if (spec.mode === 'state-file') {
    const read = await readAlState(spec.config.path);
    if (read.kind === 'ok' && read.state.goal.trim() !== '') return read.state.goal;
    throw new FlagError(
      `--state-file needs a goal: allium-loop run "<goal>" --state-file (${spec.config.path} holds none).`,
    );
  }
  if (spec.mode === 'stories')
    return `stories of ${spec.config.prdPath.split('/').slice(-2).join('/')}${spec.config.storyId === undefined ? '' : ` ${spec.config.storyId}`}`;
  return 'verify';
}

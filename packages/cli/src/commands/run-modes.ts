import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseAgentConfig, type AgentRunner } from '@allium-loop/agents';
import { AlliumLoopError, formatError } from '@allium-loop/errors';
import { createFileLedgerStore, createRedactor, type Caps } from '@allium-loop/ledger';
import {
  loadPrd,
  readAlState,
  resumeModeRun,
  startModeRun,
  type ModeProgress,
  type ModeRunOutcome,
  type ModeRunSettings,
  type ModeSpec,
} from '@allium-loop/orchestrator';
import type { CliIo } from '../cli-io.js';
import type { Config } from '../config/config-schema.js';
import { loadConfig } from '../config/load-config.js';
import { ExitCode } from '../exit-codes.js';
import { timerLimitProblem } from './run-options.js';

/** The flags that select a mode; without any of them `run` is the spec loop. */
export const MODE_FLAGS = ['--verify', '--stories', '--state-file'] as const;

/** Settings from `allium-loop.yaml` that modes honour: the agent and the caps (flags override them). */
export type ModeConfigDefaults = Pick<Config, 'agent' | 'caps'>;

/** What {@link runModeCommand} may be given besides its arguments and io. */
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

const OPTIONS = {
  verify: { type: 'string' },
  stories: { type: 'string' },
  'state-file': { type: 'string' },
  agent: { type: 'string' },
  model: { type: 'string' },
  'permission-mode': { type: 'string' },
  'agent-script': { type: 'string' },
  'agent-command': { type: 'string' },
  'agent-timeout': { type: 'string' },
  'test-timeout': { type: 'string' },
  'max-ticks': { type: 'string' },
  'no-progress-ticks': { type: 'string' },
  interval: { type: 'string' },
  hillclimb: { type: 'boolean' },
  score: { type: 'string' },
  minimize: { type: 'boolean' },
  target: { type: 'string' },
  story: { type: 'string' },
  'skip-eval': { type: 'boolean' },
  'eval-retries': { type: 'string' },
  'budget-usd': { type: 'string' },
  'max-call-usd': { type: 'string' },
  'wall-clock': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

type Values = {
  [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string;
};

/** Default state file of `--state-file` given without a path. */
export const DEFAULT_STATE_FILE = '.al-state.json';

const HELP = [
  'Usage:',
  '  allium-loop run "<goal>" --verify "<command>" [--hillclimb --score "<regex>" [--minimize] [--target N]] [--interval S]',
  '  allium-loop run ["<goal>"] --stories <prd.json> [--story ID] [--skip-eval] [--eval-retries N] [--verify "<command>"]',
  '  allium-loop run ["<goal>"] --state-file [path]',
  '',
  'Loop modes: no spec needed. See docs/modes.md.',
  '',
  'Options:',
  '  --verify "<command>"      Run this command after every agent step; exit 0 converges.',
  '  --hillclimb               Keep a tick only when the score improves; revert the others.',
  '  --score "<regex>"         Where the score is in the command output (first group, last match).',
  '  --minimize                Lower scores are better (default: higher).',
  '  --target N                Converge once the best score reaches N.',
  '  --interval S              Seconds to wait between ticks (default 0).',
  '  --stories <prd.json>      Work the userStories of a PRD: generator, then a sceptical evaluator.',
  '  --story ID                Work only this story.',
  '  --skip-eval               No evaluator phase (the verify command, when given, still gates).',
  '  --eval-retries N          Rejections before a story is blocked (default 3).',
  `  --state-file [path]       Agent-maintained state file (default ${DEFAULT_STATE_FILE}).`,
  '  --agent <kind>            claude | codex | gemini | aider | opencode | command | replay',
  '  --model <name>            Model for the agent.',
  '  --agent-command "<argv>"  The command agent: program and arguments ({prompt_file}, {result_file}, {cwd}, {phase}).',
  '  --agent-script <path>     The replay agent: a recorded script.',
  '  --max-ticks N  --wall-clock S  --budget-usd X  --max-call-usd X  --agent-timeout S  --test-timeout S',
  '  --no-progress-ticks N',
  '  --json                    NDJSON journal events on stdout.',
  '',
  'Exit codes: 0 converged, 1 failed, 2 usage, 3 max_ticks, 4 no_progress, 5 awaiting_input, 6 timed_out,',
  '7 budget_exhausted, 130 cancelled.',
  '',
].join('\n');

/** A flag value the mode cannot use. */
class ModeUsageError extends Error {}

/**
 * `allium-loop run` in one of the loop modes. Returns `undefined` when `args` names none of `--verify`,
 * `--stories`, `--state-file` (the spec loop runs then); otherwise parses all of `args` (strict) and runs the mode,
 * returning the exit code of its terminal state, or 2 on a usage error.
 */
export async function runModeCommand(
  args: readonly string[],
  io: CliIo,
  deps: RunModeDeps = {},
): Promise<number | undefined> {
  if (!args.some((arg) => MODE_FLAGS.some((flag) => arg === flag || arg.startsWith(`${flag}=`))))
    return undefined;
  let parsed: { values: Values; goal: string | undefined };
  try {
    parsed = parseModeArgs(args);
  } catch (error) {
    io.stderr(
      `allium-loop run: ${(error as Error).message}\nRun 'allium-loop run --verify x --help' for the modes' usage.\n`,
    );
    return ExitCode.usage;
  }
  if (parsed.values.help === true) {
    io.stdout(HELP);
    return ExitCode.ok;
  }
  const config = deps.config ?? (await readConfig(io));
  if (config === undefined) return ExitCode.usage;
  let plan: { goal: string; spec: ModeSpec; settings: ModeRunSettings };
  try {
    plan = await planModeRun(parsed.values, parsed.goal, io, { ...deps, config });
  } catch (error) {
    if (error instanceof ModeUsageError) {
      io.stderr(`allium-loop run: ${error.message}\n`);
      return ExitCode.usage;
    }
    if (AlliumLoopError.is(error) && error.code.startsWith('modes.')) {
      io.stderr(`allium-loop run: ${formatError(error)}\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  return execute(plan, io, parsed.values.json === true);
}

async function execute(
  plan: { goal: string; spec: ModeSpec; settings: ModeRunSettings },
  io: CliIo,
  json: boolean,
): Promise<number> {
  return report(io, json, () => startModeRun(plan.goal, plan.spec, plan.settings));
}

async function report(io: CliIo, json: boolean, start: () => Promise<ModeRunOutcome>): Promise<number> {
  let outcome: ModeRunOutcome;
  try {
    outcome = await start();
  } catch (error) {
    if (!AlliumLoopError.is(error)) throw error;
    io.stderr(`allium-loop run: ${formatError(error)}\n`);
    return ExitCode.failure;
  }
  if (!json) {
    const terminal = outcome.ledger.terminal;
    io.stdout(`\n${outcome.summary}${terminal === null ? '' : `${terminal.state}: ${terminal.detail}\n`}`);
  }
  return outcome.exitCode;
}

async function readConfig(io: CliIo): Promise<ModeConfigDefaults | undefined> {
  const loaded = await loadConfig(io.cwd);
  if (loaded.ok) return loaded.value;
  io.stderr(`allium-loop run: ${loaded.issues.join('\n')}\n`);
  return undefined;
}

/**
 * `allium-loop resume <slug>` for a run of one of the loop modes: returns `undefined` when `args` names no run, or
 * a spec-loop run (the spec loop resumes it then); otherwise continues the mode run from its ledger (its mode,
 * configuration, agent and caps are stored there) and returns the exit code. Only `--json` may accompany the slug.
 */
export async function resumeModeCommand(
  args: readonly string[],
  io: CliIo,
  deps: RunModeDeps = {},
): Promise<number | undefined> {
  const slug = args.find((arg) => !arg.startsWith('-'));
  if (slug === undefined || !SLUG.test(slug)) return undefined;
  const loaded = await createFileLedgerStore({
    dir: join(io.cwd, '.allium-loop'),
    redactor: createRedactor(io.env),
  }).load(slug);
  if (!loaded.ok || loaded.value.ledger.mode === 'spec') return undefined;
  const extra = args.filter((arg) => arg !== slug && arg !== '--json');
  if (extra.length > 0) {
    io.stderr(
      `allium-loop resume: a ${loaded.value.ledger.mode} run resumes with its stored settings; only --json may be given (not ${extra.join(' ')}).\n`,
    );
    return ExitCode.usage;
  }
  const json = args.includes('--json');
  const settings: ModeRunSettings = {
    cwd: io.cwd,
    agent: undefined,
    caps: {},
    env: io.env,
    signal: deps.signal ?? io.signal ?? new AbortController().signal,
    clock: { now: deps.now ?? io.now ?? (() => Date.now()) },
    ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
    ...(deps.createAgent === undefined ? {} : { createAgent: deps.createAgent }),
    onProgress: progressPrinter(io, json),
    announce: (line) => io[json ? 'stderr' : 'stdout'](`${line}\n`),
  };
  return report(io, json, () => resumeModeRun(slug, settings));
}

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** `--state-file` may stand alone: it takes the next argument only when that looks like a path to a JSON file. */
function normalizeStateFileFlag(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    out.push(arg);
    if (arg !== '--state-file') continue;
    const next = args[i + 1];
    if (next !== undefined && !next.startsWith('-') && (next.endsWith('.json') || next.includes('/')))
      continue;
    out.push(DEFAULT_STATE_FILE);
  }
  return out;
}

function parseModeArgs(args: readonly string[]): { values: Values; goal: string | undefined } {
  const { values, positionals } = parseArgs({
    args: normalizeStateFileFlag(args),
    options: OPTIONS,
    strict: true,
    allowPositionals: true,
  });
  if (positionals.length > 1)
    throw new Error(
      `one goal expected, got ${String(positionals.length)}: ${positionals.map((p) => `"${p}"`).join(' ')}`,
    );
  return { values: values as Values, goal: positionals[0] };
}

function number(
  flag: string,
  value: string | undefined,
  kind: 'positive' | 'integer' | 'nonnegative' | 'any',
): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const bad =
    value.trim() === '' ||
    !Number.isFinite(n) ||
    (kind === 'positive' && n <= 0) ||
    (kind === 'nonnegative' && n < 0) ||
    (kind === 'integer' && (!Number.isInteger(n) || n <= 0));
  if (bad)
    throw new ModeUsageError(
      `--${flag} takes ${kind === 'integer' ? 'a positive whole number' : kind === 'any' ? 'a number' : `a ${kind} number`}, not '${value}'.`,
    );
  return n;
}

async function planModeRun(values: Values, goal: string | undefined, io: CliIo, deps: RunModeDeps) {
  const selected = (['verify', 'stories', 'state-file'] as const).filter((m) => values[m] !== undefined);
  if (selected.includes('state-file') && selected.length > 1)
    throw new ModeUsageError('--state-file cannot be combined with --verify or --stories.');
  const spec = buildSpec(values, goal, io);
  await checkModeInputs(spec);
  const now = deps.now ?? io.now ?? (() => Date.now());
  const settings: ModeRunSettings = {
    cwd: io.cwd,
    agent: agentConfig(values, deps.config?.agent, io.cwd),
    caps: capsFrom(values, deps.config?.caps),
    env: io.env,
    signal: deps.signal ?? io.signal ?? new AbortController().signal,
    clock: { now },
    ...(deps.sleep === undefined ? {} : { sleep: deps.sleep }),
    ...(deps.createAgent === undefined ? {} : { createAgent: deps.createAgent }),
    onProgress: progressPrinter(io, values.json === true),
    announce: (line) => io[values.json === true ? 'stderr' : 'stdout'](`${line}\n`),
  };
  // The goal is redacted once, here: the ledger, the prompts and every echo of it see the same text.
  return { goal: createRedactor(io.env).text(await resolveGoal(spec, goal)), spec, settings };
}

/** A PRD is validated before anything starts: a bad one is a usage error naming the file and each issue. */
async function checkModeInputs(spec: ModeSpec): Promise<void> {
  if (spec.mode !== 'stories') return;
  const loaded = await loadPrd(spec.config.prdPath);
  if (!loaded.ok) throw new ModeUsageError(`invalid PRD:\n  ${loaded.issues.join('\n  ')}`);
  const id = spec.config.storyId;
  if (id !== undefined && !loaded.value.userStories.some((story) => story.id === id))
    throw new ModeUsageError(
      `--story ${id}: no such story in ${spec.config.prdPath} (ids: ${loaded.value.userStories.map((s) => s.id).join(', ')}).`,
    );
}

function buildSpec(values: Values, goal: string | undefined, io: CliIo): ModeSpec {
  const climbing = values.hillclimb === true;
  if (!climbing && (values.score !== undefined || values.minimize === true || values.target !== undefined))
    throw new ModeUsageError('--score, --minimize and --target need --hillclimb.');
  if (
    values.stories === undefined &&
    (values.story !== undefined || values['skip-eval'] === true || values['eval-retries'] !== undefined)
  )
    throw new ModeUsageError('--story, --skip-eval and --eval-retries need --stories <prd.json>.');
  if (values.stories !== undefined) return storiesSpec(values, io);
  if (values['state-file'] !== undefined)
    return {
      mode: 'state-file',
      config: { path: resolve(io.cwd, values['state-file']) },
      defaultCaps: { maxTicks: 10 },
    };
  if (goal === undefined || goal.trim() === '')
    throw new ModeUsageError('--verify needs a goal: allium-loop run "<goal>" --verify "<command>".');
  return { mode: 'verify', config: verifyConfig(values), defaultCaps: { maxTicks: 10 } };
}

function verifyConfig(values: Values) {
  const command = values.verify ?? '';
  if (command.trim() === '') throw new ModeUsageError('--verify needs a command.');
  const intervalMs = Math.round((number('interval', values.interval, 'nonnegative') ?? 0) * 1000);
  if (values.hillclimb !== true) return { command, intervalMs };
  const score = values.score;
  if (score === undefined)
    throw new ModeUsageError('--hillclimb needs --score "<regex>" to read the score from the output.');
  try {
    new RegExp(score);
  } catch (error) {
    throw new ModeUsageError(`--score is not a valid regular expression: ${(error as Error).message}`);
  }
  const target = number('target', values.target, 'any');
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

function storiesSpec(values: Values, io: CliIo): ModeSpec {
  const verify = values.verify;
  if (verify?.trim() === '') throw new ModeUsageError('--verify needs a command.');
  return {
    mode: 'stories',
    config: {
      prdPath: resolve(io.cwd, values.stories!),
      evalRetries: number('eval-retries', values['eval-retries'], 'integer') ?? 3,
      skipEval: values['skip-eval'] === true,
      ...(values.story === undefined ? {} : { storyId: values.story }),
      ...(verify === undefined ? {} : { verifyCommand: verify }),
    },
    defaultCaps: { maxTicks: 50 },
  };
}

async function resolveGoal(spec: ModeSpec, goal: string | undefined): Promise<string> {
  if (goal !== undefined && goal.trim() !== '') return goal;
  if (spec.mode === 'state-file') {
    const read = await readAlState(spec.config.path);
    if (read.kind === 'ok' && read.state.goal.trim() !== '') return read.state.goal;
    throw new ModeUsageError(
      `--state-file needs a goal: allium-loop run "<goal>" --state-file (${spec.config.path} holds none).`,
    );
  }
  if (spec.mode === 'stories')
    return `stories of ${spec.config.prdPath.split('/').slice(-2).join('/')}${spec.config.storyId === undefined ? '' : ` ${spec.config.storyId}`}`;
  return 'verify';
}

function agentConfig(values: Values, fromConfig: unknown, cwd: string): unknown {
  const script = values['agent-script'];
  const command = values['agent-command'];
  const kind =
    values.agent ?? (script !== undefined ? 'replay' : command !== undefined ? 'command' : undefined);
  const configured = (fromConfig ?? undefined) as Record<string, unknown> | undefined;
  const base: Record<string, unknown> =
    kind === undefined
      ? { ...(configured ?? { kind: 'claude' }) }
      : configured?.['kind'] === kind
        ? { ...configured }
        : { kind };
  if (values.model !== undefined) base['model'] = values.model;
  if (values['permission-mode'] !== undefined) base['permissionMode'] = values['permission-mode'];
  if (script !== undefined) base['script'] = resolve(cwd, script);
  if (command !== undefined) base['argv'] = splitCommand(command);
  const parsed = parseAgentConfig(base);
  if (!parsed.ok) throw new ModeUsageError(`agent configuration: ${parsed.issues.join('; ')}`);
  return parsed.value;
}

/** Splits an `--agent-command` template into argv, honouring quotes; no shell is involved. */
export function splitCommand(template: string): string[] {
  const argv: string[] = [];
  let current: string | undefined;
  let quote: string | undefined;
  for (const char of template) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else current = (current ?? '') + char;
    } else if (char === '"' || char === "'") {
      quote = char;
      current ??= '';
    } else if (/\s/.test(char)) {
      if (current !== undefined) argv.push(current);
      current = undefined;
    } else {
      current = (current ?? '') + char;
    }
  }
  if (quote !== undefined) throw new ModeUsageError(`unclosed ${quote} in --agent-command`);
  if (current !== undefined) argv.push(current);
  if (argv.length === 0) throw new ModeUsageError('--agent-command is empty.');
  return argv;
}

function capsFrom(values: Values, config: NonNullable<ModeConfigDefaults['caps']> = {}): Partial<Caps> {
  const ms = (flag: string, value: string | undefined, fallback: number | undefined) => {
    const s = number(flag, value, 'positive') ?? fallback;
    if (s === undefined) return undefined;
    const problem = timerLimitProblem(`--${flag}`, s);
    if (problem !== undefined) throw new ModeUsageError(problem);
    return Math.round(s * 1000);
  };
  const caps: Partial<Record<keyof Caps, number | undefined>> = {
    maxTicks: number('max-ticks', values['max-ticks'], 'integer') ?? config.maxTicks,
    noProgressTicks:
      number('no-progress-ticks', values['no-progress-ticks'], 'integer') ?? config.noProgressTicks,
    budgetUsd: number('budget-usd', values['budget-usd'], 'positive') ?? config.budgetUsd,
    maxCallUsd: number('max-call-usd', values['max-call-usd'], 'positive') ?? config.maxCallUsd,
    wallClockMs: ms('wall-clock', values['wall-clock'], config.wallClockSeconds),
    agentTimeoutMs: ms('agent-timeout', values['agent-timeout'], config.agentTimeoutSeconds),
    testTimeoutMs: ms('test-timeout', values['test-timeout'], config.testTimeoutSeconds),
  };
  return Object.fromEntries(Object.entries(caps).filter(([, v]) => v !== undefined)) as Partial<Caps>;
}

function progressPrinter(io: CliIo, json: boolean): (progress: ModeProgress) => void {
  return (progress) => {
    if (json) {
      if (progress.kind === 'event') io.stdout(`${JSON.stringify(progress.event)}\n`);
      else io.stderr(`${progress.text}\n`);
      return;
    }
    if (progress.kind === 'line') io.stdout(`${progress.text}\n`);
  };
}

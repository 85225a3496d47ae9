import { resolve } from 'node:path';
import { parseAgentConfig, PHASE_AGENT_KINDS } from '@allium-loop/agents';
import type { Caps } from '@allium-loop/ledger';
import type { RunSettings } from '@allium-loop/orchestrator';
import type { CliIo } from '../cli-io.js';
import type { Config } from '../config/config-schema.js';
import { loadConfig } from '../config/load-config.js';
import {
  createProgressRenderer,
  type OutputMode,
  type ProgressRenderer,
} from '../progress/progress-renderer.js';
import {
  FlagError,
  maxTicksFlag,
  numberFlag,
  parseRunFlags,
  splitCommand,
  timerLimitProblem,
  type ParsedRunFlags,
  type RunFlag,
  type RunFlagValues,
} from './run-flags.js';

/**
 * The agent configuration from the flags over the config file, checked before anything starts; `undefined` when
 * neither flags nor the config file name an agent (a new run then uses Claude Code; `resume` keeps the run's
 * recorded agent). `--agent-script` or `--agent-command` beside another `--agent` is refused. Otherwise: an unknown agent
 * kind, an unknown `--agent-command` placeholder or a missing script is a {@link FlagError} (exit 2).
 * `--agent-script` implies the replay agent and `--agent-command` the command agent; a script path is resolved
 * against the working directory.
 */
export function agentFromFlags(values: RunFlagValues, configured: Config['agent'], cwd: string): unknown {
  const script = values['agent-script'];
  const command = values['agent-command'];
  const implied = script !== undefined ? 'replay' : command !== undefined ? 'command' : undefined;
  const kind = values.agent ?? implied ?? configured?.kind;
  if (script !== undefined && kind !== 'replay')
    throw new FlagError(`--agent-script is for --agent replay, not --agent ${String(kind)}.`);
  if (command !== undefined && kind !== 'command')
    throw new FlagError(`--agent-command is for --agent command, not --agent ${String(kind)}.`);
  const phaseAgents = values['phase-agents'];
  if (
    kind === undefined &&
    values.model === undefined &&
    values['permission-mode'] === undefined &&
    phaseAgents === undefined
  )
    return configured;
  const base: Record<string, unknown> =
    kind === undefined ? { kind: 'claude' } : configured?.kind === kind ? { ...configured } : { kind };
  if (values.model !== undefined) base['model'] = values.model;
  if (values['permission-mode'] !== undefined) base['permissionMode'] = values['permission-mode'];
  if (phaseAgents !== undefined)
    setPhaseAgents(
      base,
      phaseAgents,
      values.agent !== undefined
        ? '--agent'
        : implied !== undefined
          ? `--agent-${implied}`
          : 'allium-loop.yaml',
    );
  if (script !== undefined) base['script'] = resolve(cwd, script);
  if (command !== undefined) base['argv'] = splitCommand(command);
  if (base['kind'] === 'replay' && base['script'] === undefined)
    throw new FlagError('--agent replay needs --agent-script <path>.');
  if (base['kind'] === 'command' && base['argv'] === undefined)
    throw new FlagError('--agent command needs --agent-command "<program> {prompt_file} {result_file}".');
  const parsed = parseAgentConfig(base);
  if (!parsed.ok)
    throw new FlagError(
      `the agent setting is wrong (agent ${JSON.stringify(base['kind'])}): ${parsed.issues.join('; ')}`,
    );
  return parsed.value;
}

/**
 * `--phase-agents` on the agent setting: `allium` only for a kind that can run the Allium plugin's agents
 * (`PHASE_AGENT_KINDS`: Claude Code), else a {@link FlagError}; `own` is what every other kind does anyway, so it
 * sets nothing there.
 */
function setPhaseAgents(base: Record<string, unknown>, value: string, source: string): void {
  const kind = String(base['kind']);
  if (PHASE_AGENT_KINDS.includes(kind)) {
    base['phaseAgents'] = value;
    return;
  }
  if (value === 'own') return;
  throw new FlagError(
    `--phase-agents ${value} needs an agent that has the Allium plugin's agents (${PHASE_AGENT_KINDS.join(', ')}); ` +
      `the agent is ${kind} (${source}), which has none.`,
  );
}

/** The caps that flags or the config file set (flags win); the engine's defaults fill in the rest. */
export function capsFromFlags(
  values: RunFlagValues,
  caps: NonNullable<Config['caps']> = {},
): Partial<Caps> & { maxFixAttempts?: number; innerLoopMax?: number; maxCallUsd?: number } {
  const ms = (flag: RunFlag, fallback: number | undefined) => {
    const seconds = numberFlag(values, flag) ?? fallback;
    if (seconds === undefined) return undefined;
    const problem = timerLimitProblem(`--${flag}`, seconds);
    if (problem !== undefined) throw new FlagError(problem);
    return Math.round(seconds * 1000);
  };
  const all = {
    maxTicks: maxTicksFlag(values) ?? caps.maxTicks,
    noProgressTicks: numberFlag(values, 'no-progress-ticks') ?? caps.noProgressTicks,
    maxFixAttempts: numberFlag(values, 'max-fix-attempts') ?? caps.maxFixAttempts,
    innerLoopMax: numberFlag(values, 'inner-loop-max') ?? caps.innerLoopMax,
    budgetUsd: numberFlag(values, 'budget-usd') ?? caps.budgetUsd,
    maxCallUsd: numberFlag(values, 'max-call-usd') ?? caps.maxCallUsd,
    wallClockMs: ms('wall-clock', caps.wallClockSeconds),
    agentTimeoutMs: ms('agent-timeout', caps.agentTimeoutSeconds),
    testTimeoutMs: ms('test-timeout', caps.testTimeoutSeconds),
  };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
}

/**
 * Builds the spec loop's settings from flags, the config file and the terminal. Throws {@link FlagError} on bad
 * values. Output goes through `onProgress`, `onActivity` and `announce`, which the caller's progress renderer provides.
 */
export function runSettings(
  values: RunFlagValues,
  config: Config,
  io: CliIo,
  output: Pick<RunSettings, 'onProgress' | 'onActivity' | 'announce'>,
): RunSettings {
  const interactive = io.isTTY && io.prompt !== undefined;
  const prompt = interactive ? io.prompt : undefined;
  const agent = agentFromFlags(values, config.agent, io.cwd);
  return {
    cwd: io.cwd,
    ...(agent === undefined ? {} : { agent }),
    caps: capsFromFlags(values, config.caps) as RunSettings['caps'],
    strictQuestions: values['strict-questions'] ?? config.strictQuestions ?? false,
    interactive,
    env: io.env,
    signal: io.signal ?? new AbortController().signal,
    clock: { now: io.now ?? (() => Date.now()) },
    ...output,
    ...(config.testCommand === undefined ? {} : { testCommand: config.testCommand }),
    ...(config.onDrift === undefined ? {} : { onDrift: config.onDrift }),
    ...(values.scope === undefined ? {} : { scope: values.scope.split(',') }),
    ...concurrencyOf(values, config),
    ...stallWarningOf(values, config),
    ...(prompt === undefined
      ? {}
      : {
          promptLine: async (q: string) => (await prompt(q)) ?? '',
          ask: async (questions) => {
            const answers: { id: string; answer: string }[] = [];
            for (const question of questions) {
              const answer = await prompt(`Blocking question ${question.id}: ${question.text}\n> `);
              if (answer !== undefined && answer.trim() !== '')
                answers.push({ id: question.id, answer: answer.trim() });
            }
            return answers.length > 0 ? answers : undefined;
          },
        }),
  };
}

/** `--stall-warning-ticks N` (or the config file's `stallWarningTicks`), when given (a count: at least 1). */
function stallWarningOf(values: RunFlagValues, config: Config): { stallWarningTicks?: number } {
  const given = numberFlag(values, 'stall-warning-ticks') ?? config.stallWarningTicks;
  return given === undefined ? {} : { stallWarningTicks: given };
}

/** `--concurrency N` (or the config file's `concurrency`), when given (a count: at least 1). */
function concurrencyOf(values: RunFlagValues, config: Config): { concurrency?: number } {
  const given = numberFlag(values, 'concurrency') ?? config.concurrency;
  return given === undefined ? {} : { concurrency: given };
}

/** The output mode the flags choose. */
export function outputMode(values: RunFlagValues): OutputMode {
  if (values.json === true) return 'json';
  return values.quiet === true ? 'quiet' : 'text';
}

/** Builds the progress renderer for a run (heartbeat interval from ALLIUM_LOOP_HEARTBEAT_SECONDS, default 30). */
export function progressFor(io: CliIo, mode: OutputMode): ProgressRenderer {
  const heartbeat = Number(io.env['ALLIUM_LOOP_HEARTBEAT_SECONDS']);
  return createProgressRenderer(io, {
    mode,
    ...(Number.isFinite(heartbeat) && heartbeat > 0 ? { heartbeatMs: heartbeat * 1000 } : {}),
  });
}

/** Reads `allium-loop.yaml`; prints its issues and returns `undefined` (exit 2) when it is invalid. */
export async function readConfig(io: CliIo, command: string): Promise<Config | undefined> {
  const config = await loadConfig(io.cwd);
  if (config.ok) return config.value;
  io.stderr(
    `allium-loop ${command}: the config file is invalid:\n${config.issues.map((i) => `  ${i}`).join('\n')}\n`,
  );
  return undefined;
}

/** Parses the flags of run/resume, printing a usage error; `undefined` means exit 2. */
export function parseOrReport(
  args: readonly string[],
  io: CliIo,
  command: 'run' | 'resume',
): ParsedRunFlags | undefined {
  try {
    return parseRunFlags(args, command);
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    io.stderr(
      `allium-loop ${command}: ${error.message}\nRun 'allium-loop ${command} --help' for the flags.\n`,
    );
    return undefined;
  }
}

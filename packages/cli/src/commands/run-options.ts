import type { ParseArgsConfig } from 'node:util';
import { MAX_TIMEOUT_MS } from '@allium-loop/agents';
import type { RunSettings } from '@allium-loop/orchestrator';
import type { CliIo } from '../cli-io.js';
import type { Config } from '../config/config-schema.js';

/** Flags shared by `run` and `resume`: the agent, every cap, and output. */
export const RUN_FLAGS = {
  agent: { type: 'string' },
  model: { type: 'string' },
  'agent-script': { type: 'string' },
  'agent-command': { type: 'string' },
  'permission-mode': { type: 'string' },
  'max-ticks': { type: 'string' },
  'no-progress-ticks': { type: 'string' },
  'max-fix-attempts': { type: 'string' },
  'inner-loop-max': { type: 'string' },
  'wall-clock': { type: 'string' },
  'budget-usd': { type: 'string' },
  'max-call-usd': { type: 'string' },
  'agent-timeout': { type: 'string' },
  'test-timeout': { type: 'string' },
  'strict-questions': { type: 'boolean' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** Parsed values of {@link RUN_FLAGS}. */
export type RunFlagValues = {
  [K in keyof typeof RUN_FLAGS]?: (typeof RUN_FLAGS)[K]['type'] extends 'boolean' ? boolean : string;
};

/** A flag value that is not what the flag takes. */
export class FlagError extends Error {}

function positiveNumber(flag: string, value: string | undefined, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0 || (integer && !Number.isInteger(number))) {
    throw new FlagError(`--${flag} takes a positive ${integer ? 'whole number' : 'number'}, not '${value}'.`);
  }
  return number;
}

/**
 * Why a duration in seconds cannot be a timer: Node fires a timer longer than {@link MAX_TIMEOUT_MS} after 1 ms,
 * so such a limit would time every call out at once. Undefined when it can.
 */
export function timerLimitProblem(name: string, seconds: number): string | undefined {
  if (Math.round(seconds * 1000) <= MAX_TIMEOUT_MS) return undefined;
  const most = Math.floor(MAX_TIMEOUT_MS / 1000);
  return `${name} ${String(seconds)} is longer than the longest timer Node can set: at most ${String(most)} seconds (about 24 days).`;
}

/** Splits a command template on spaces, honouring single and double quotes; no shell is involved. */
export function splitArgv(template: string): string[] {
  const argv: string[] = [];
  let current = '';
  let quote: string | undefined;
  let started = false;
  for (const char of template) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else current += char;
    } else if (char === '"' || char === "'") {
      quote = char;
      started = true;
    } else if (/\s/.test(char)) {
      if (started || current !== '') argv.push(current);
      current = '';
      started = false;
    } else {
      current += char;
    }
  }
  if (quote !== undefined) throw new FlagError(`unclosed ${quote} in --agent-command`);
  if (started || current !== '') argv.push(current);
  return argv;
}

/** The agent configuration: flags over the config file; the replay and command agents need their script/command. */
export function agentFromFlags(values: RunFlagValues, config: Config): unknown {
  const kind = values.agent ?? config.agent?.kind;
  if (kind === undefined) return config.agent ?? { kind: 'claude' };
  const base: Record<string, unknown> = config.agent?.kind === kind ? { ...config.agent } : { kind };
  if (values.model !== undefined) base['model'] = values.model;
  if (values['permission-mode'] !== undefined) base['permissionMode'] = values['permission-mode'];
  if (kind === 'replay' && values['agent-script'] !== undefined) base['script'] = values['agent-script'];
  if (kind === 'command' && values['agent-command'] !== undefined)
    base['argv'] = splitArgv(values['agent-command']);
  if (kind === 'replay' && base['script'] === undefined)
    throw new FlagError('--agent replay needs --agent-script <path>.');
  if (kind === 'command' && base['argv'] === undefined)
    throw new FlagError('--agent command needs --agent-command "<program> {prompt_file} {result_file}".');
  return base;
}

/** Builds the run settings from flags, the config file and the terminal. Throws {@link FlagError} on bad values. */
export function runSettings(
  values: RunFlagValues,
  config: Config,
  io: CliIo,
  onProgress: RunSettings['onProgress'],
): RunSettings {
  const caps = config.caps ?? {};
  const seconds = (flag: keyof RunFlagValues, fallback: number | undefined) => {
    const value = positiveNumber(flag, values[flag] as string | undefined, false) ?? fallback;
    if (value === undefined) return undefined;
    const problem = timerLimitProblem(`--${flag}`, value);
    if (problem !== undefined) throw new FlagError(problem);
    return Math.round(value * 1000);
  };
  const capValues = {
    maxTicks: positiveNumber('max-ticks', values['max-ticks'], true) ?? caps.maxTicks,
    noProgressTicks:
      positiveNumber('no-progress-ticks', values['no-progress-ticks'], true) ?? caps.noProgressTicks,
    maxFixAttempts:
      positiveNumber('max-fix-attempts', values['max-fix-attempts'], true) ?? caps.maxFixAttempts,
    innerLoopMax: positiveNumber('inner-loop-max', values['inner-loop-max'], true) ?? caps.innerLoopMax,
    budgetUsd: positiveNumber('budget-usd', values['budget-usd'], false) ?? caps.budgetUsd,
    maxCallUsd: positiveNumber('max-call-usd', values['max-call-usd'], false) ?? caps.maxCallUsd,
    wallClockMs: seconds('wall-clock', caps.wallClockSeconds),
    agentTimeoutMs: seconds('agent-timeout', caps.agentTimeoutSeconds),
    testTimeoutMs: seconds('test-timeout', caps.testTimeoutSeconds),
  };
  const defined = Object.fromEntries(
    Object.entries(capValues).filter(([, v]) => v !== undefined),
  ) as RunSettings['caps'];
  const interactive = io.isTTY && io.prompt !== undefined;
  return {
    cwd: io.cwd,
    agent: agentFromFlags(values, config),
    caps: defined,
    strictQuestions: values['strict-questions'] ?? config.strictQuestions ?? false,
    interactive,
    env: io.env,
    signal: io.signal ?? new AbortController().signal,
    clock: { now: io.now ?? (() => Date.now()) },
    ...(onProgress === undefined ? {} : { onProgress }),
    announce: (line) => {
      if (values.json !== true) io.stdout(`${line}\n`);
    },
    ...(config.testCommand === undefined ? {} : { testCommand: config.testCommand }),
    ...(config.onDrift === undefined ? {} : { onDrift: config.onDrift }),
    ...(interactive && io.prompt !== undefined
      ? { promptLine: async (q: string) => (await io.prompt!(q)) ?? '' }
      : {}),
    ...(interactive && io.prompt !== undefined
      ? {
          ask: async (questions) => {
            const answers: { id: string; answer: string }[] = [];
            for (const question of questions) {
              const answer = await io.prompt!(`Blocking question ${question.id}: ${question.text}\n> `);
              if (answer !== undefined && answer.trim() !== '')
                answers.push({ id: question.id, answer: answer.trim() });
            }
            return answers.length > 0 ? answers : undefined;
          },
        }
      : {}),
  };
}

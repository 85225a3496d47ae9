import { resolve } from 'node:path';
import type { EntryPoint } from '@allium-loop/entry';
import { AlliumLoopError, formatError } from '@allium-loop/errors';
import { createRedactor } from '@allium-loop/ledger';
import {
  inferGoal,
  openStore,
  resumeRun,
  startRun,
  type DriftPolicy,
  type RunOutcome,
  type RunSettings,
} from '@allium-loop/orchestrator';
import type { CliIo } from '../cli-io.js';
import type { Config } from '../config/config-schema.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import type { ProgressRenderer } from '../progress/progress-renderer.js';
import { renderReport } from '../render/render-report.js';
import { resumeModeRun, runModeRun } from './run-modes.js';
import {
  FlagError,
  numberFlag,
  renderRunHelp,
  type ParsedRunFlags,
  type RunFlagValues,
} from './run-flags.js';
import { outputMode, parseOrReport, progressFor, readConfig, runSettings } from './run-options.js';

const MAX_GOAL_LENGTH = 4000;

/** Engine errors that are the user's input, not a failure of the run: exit 2 like any usage error. */
const USAGE_ERROR_CODES = new Set([
  'verify.no_test_command',
  'agents.invalid_config',
  'scale_out.unknown_slice',
  'run.bad_scope',
]);

/** Prints the final report of a spec-loop run and returns its exit code. */
export function finish(progress: ProgressRenderer, outcome: RunOutcome): number {
  progress.close();
  progress.report(`\n${renderReport(outcome.ledger)}`);
  return outcome.exitCode;
}

/**
 * Runs a loop operation with its progress renderer: typed engine errors become a clear message (with the error's
 * hint, e.g. how to install a missing agent) and exit 1, or 2 when the error is a usage error.
 */
export async function guarded(
  io: CliIo,
  progress: ProgressRenderer | undefined,
  work: () => Promise<number>,
): Promise<number> {
  try {
    return await work();
  } catch (error) {
    progress?.close();
    io.stderr(`allium-loop: ${formatError(error)}\n`);
    return AlliumLoopError.is(error) && USAGE_ERROR_CODES.has(error.code) ? ExitCode.usage : ExitCode.failure;
  } finally {
    progress?.close();
  }
}

/** Runs `work`, turning a {@link FlagError} thrown while building settings into a usage error (exit 2). */
export async function usageGuard(io: CliIo, command: string, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof FlagError)) throw error;
    io.stderr(`allium-loop ${command}: ${error.message}\n`);
    return ExitCode.usage;
  }
}

function checkGoal(goal: string, count: number, io: CliIo): boolean {
  if (goal === '' || count > 1) {
    io.stderr(
      `allium-loop run: give the goal as one quoted argument, e.g. allium-loop run "add gift cards to checkout".\n`,
    );
    return false;
  }
  if (goal.length > MAX_GOAL_LENGTH) {
    io.stderr(
      `allium-loop run: the goal is ${String(goal.length)} characters; keep it under ${String(MAX_GOAL_LENGTH)} (put detail in the spec).\n`,
    );
    return false;
  }
  return true;
}

/** `run --slice <id> --plan <file> [--ledger-out <file>]`: one slice of a stored plan, as a CI matrix job runs it. */
async function runPlannedSlice(parsed: ParsedRunFlags, io: CliIo): Promise<number> {
  const { slice, plan: planFile, entry } = parsed.values;
  const ledgerOut = parsed.values['ledger-out'];
  const problem =
    slice === undefined || planFile === undefined
      ? '--slice and --plan go together: allium-loop run --slice <id> --plan plan.json'
      : parsed.positionals.length > 0
        ? 'with --slice the goal comes from the plan file; give no goal'
        : entry !== undefined
          ? '--entry does not apply to a slice (it starts with propagate)'
          : slice.trim() === '' || planFile.trim() === '' || ledgerOut?.trim() === ''
            ? '--slice, --plan and --ledger-out need a value'
            : undefined;
  if (problem !== undefined) {
    io.stderr(`allium-loop run: ${problem}.\n`);
    return ExitCode.usage;
  }
  return driveRun(parsed, io, async (settings) => {
    const { readStoredPlan, startSliceRun, writeLedgerFile } = await import('@allium-loop/orchestrator');
    const plan = await readStoredPlan(resolve(io.cwd, planFile!));
    const outcome = await startSliceRun(plan, slice!, settings);
    if (ledgerOut !== undefined) await writeLedgerFile(resolve(io.cwd, ledgerOut), outcome.ledger);
    return outcome;
  });
}

/** Reads the config, builds the run settings with a progress renderer, and drives `start` to its final report. */
async function driveRun(
  parsed: ParsedRunFlags,
  io: CliIo,
  start: (settings: RunSettings) => Promise<RunOutcome>,
  preface?: string,
): Promise<number> {
  const config = await readConfig(io, 'run');
  if (config === undefined) return ExitCode.usage;
  return usageGuard(io, 'run', async () => {
    const progress = progressFor(io, outputMode(parsed.values));
    const settings = runSettings(parsed.values, config, io, {
      onProgress: progress.loop,
      onActivity: progress.activity,
      announce: progress.announce,
    });
    if (preface !== undefined) progress.announce(preface);
    return guarded(io, progress, async () => finish(progress, await start(settings)));
  });
}

/**
 * The goal of `run` given none: inferred from the project ({@link inferGoal}: a blocking question, a failing test,
 * spec drift), else asked once on a terminal. `undefined` (exit 2, the message printed) when there is no terminal
 * and nothing to infer, or the question is left unanswered. Writes nothing.
 */
export async function goalWhenNoneGiven(
  io: CliIo,
  config: Config,
  values: RunFlagValues,
): Promise<{ readonly goal: string; readonly preface: string } | undefined> {
  const testTimeout = numberFlag(values, 'test-timeout') ?? config.caps?.testTimeoutSeconds;
  const inferred = await inferGoal({
    cwd: io.cwd,
    store: openStore(io.cwd, io.env),
    ...(config.testCommand === undefined ? {} : { testCommand: config.testCommand }),
    ...(testTimeout === undefined ? {} : { testTimeoutMs: Math.round(testTimeout * 1000) }),
  });
  if (inferred !== undefined)
    return {
      goal: inferred.goal,
      preface: `No goal given; inferred from the project (${inferred.reason}): ${inferred.goal}`,
    };
  const nothing =
    'no goal given, and none to infer: no blocking question is open, the tests pass (or none were found) and the spec has not changed';
  if (!io.isTTY || io.prompt === undefined) {
    io.stderr(`allium-loop run: ${nothing}. Give one: allium-loop run "<goal>".\n`);
    return undefined;
  }
  const answer = (
    (await io.prompt(`${nothing[0]!.toUpperCase()}${nothing.slice(1)}.\nWhat should this run do? `)) ?? ''
  ).trim();
  if (answer === '') {
    io.stderr('allium-loop run: no goal given. Give one: allium-loop run "<goal>".\n');
    return undefined;
  }
  return { goal: answer, preface: `Goal: ${answer}` };
}

async function runSpecLoop(parsed: ParsedRunFlags, io: CliIo): Promise<number> {
  if (parsed.values.slice !== undefined || parsed.values.plan !== undefined)
    return runPlannedSlice(parsed, io);
  if (parsed.values['ledger-out'] !== undefined) {
    io.stderr('allium-loop run: --ledger-out goes with --slice and --plan.\n');
    return ExitCode.usage;
  }
  let goal = parsed.positionals.join(' ').trim();
  let preface: string | undefined;
  if (parsed.positionals.length === 0) {
    const config = await readConfig(io, 'run');
    if (config === undefined) return ExitCode.usage;
    const chosen = await goalWhenNoneGiven(io, config, parsed.values);
    if (chosen === undefined) return ExitCode.usage;
    ({ goal, preface } = chosen);
  }
  if (!checkGoal(goal, parsed.positionals.length, io)) return ExitCode.usage;
  const entry = parsed.values.entry;
  // The goal is redacted once, here: the ledger, the prompts and every echo of it see the same text.
  return driveRun(
    parsed,
    io,
    (settings) => startRun(createRedactor(io.env).text(goal), settings, entry as EntryPoint | undefined),
    preface,
  );
}

/** `allium-loop run "<goal>"`: the spec loop, or a loop mode when `--verify`, `--stories` or `--state-file` is given. */
export function runCommand(): Command {
  return {
    name: 'run',
    synopsis: 'run "<goal>" [options]',
    summary: 'Drive a goal to convergence against the spec.',
    usage: renderRunHelp('run'),
    run: async (args, io) => {
      const parsed = parseOrReport(args, io, 'run');
      if (parsed === undefined) return ExitCode.usage;
      if (parsed.values.help === true) {
        io.stdout(renderRunHelp('run'));
        return ExitCode.ok;
      }
      return parsed.loop === 'spec' ? runSpecLoop(parsed, io) : runModeRun(parsed, io);
    },
  };
}

/** `allium-loop resume <slug>`: continues a run (of the spec loop or of a loop mode) from its ledger. */
export function resumeCommand(): Command {
  return {
    name: 'resume',
    synopsis: 'resume <slug> [options]',
    summary: 'Continue a run from its ledger in a fresh process.',
    usage: renderRunHelp('resume'),
    run: async (args, io) => {
      const parsed = parseOrReport(args, io, 'resume');
      if (parsed === undefined) return ExitCode.usage;
      if (parsed.values.help === true) {
        io.stdout(renderRunHelp('resume'));
        return ExitCode.ok;
      }
      const sliceFlag = (['slice', 'plan', 'ledger-out'] as const).find(
        (f) => parsed.values[f] !== undefined,
      );
      if (sliceFlag !== undefined) {
        io.stderr(
          `allium-loop resume: --${sliceFlag} starts a slice run; resume a slice run by its slug, or run --slice again in its checkout.\n`,
        );
        return ExitCode.usage;
      }
      const [slug, ...rest] = parsed.positionals;
      if (slug === undefined || rest.length > 0) {
        io.stderr(
          "allium-loop resume: name one run, e.g. allium-loop resume add-gift-cards (see 'allium-loop list').\n",
        );
        return ExitCode.usage;
      }
      const onDrift = parsed.values['on-drift'];
      const mode = await resumeModeRun(slug, parsed, io);
      if (mode !== undefined) return mode;
      const config = await readConfig(io, 'resume');
      if (config === undefined) return ExitCode.usage;
      return usageGuard(io, 'resume', async () => {
        const progress = progressFor(io, outputMode(parsed.values));
        const settings = runSettings(parsed.values, config, io, {
          onProgress: progress.loop,
          onActivity: progress.activity,
          announce: progress.announce,
        });
        const withDrift = onDrift === undefined ? settings : { ...settings, onDrift: onDrift as DriftPolicy };
        return guarded(io, progress, async () => finish(progress, await resumeRun(slug, withDrift)));
      });
    },
  };
}

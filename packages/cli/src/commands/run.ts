import { parseArgs } from 'node:util';
import { ENTRY_POINTS, type EntryPoint } from '@allium-loop/entry';
import { formatError } from '@allium-loop/errors';
import { createRedactor, type JournalEvent } from '@allium-loop/ledger';
import {
  resumeRun,
  startRun,
  type DriftPolicy,
  type LoopProgress,
  type RunOutcome,
  type RunSettings,
} from '@allium-loop/orchestrator';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { loadConfig } from '../config/load-config.js';
import { ExitCode } from '../exit-codes.js';
import { renderReport } from '../render/render-report.js';
import { FlagError, RUN_FLAGS, runSettings, type RunFlagValues } from './run-options.js';

const MAX_GOAL_LENGTH = 4000;
const DRIFT_POLICIES: readonly string[] = ['reverify', 'reset', 'stop'];

const RUN_HELP = `Usage: allium-loop run "<goal>" [options]

Drives a goal to convergence against the spec in the current directory.

  --entry elicit|distill|tend|weed   override the detected entry point
  --agent KIND                       claude (default), codex, gemini, aider, opencode, command, replay
  --model NAME                       the agent's model
  --agent-script PATH                the replay agent's script
  --agent-command "PROG {prompt_file} {result_file}"   the command agent (no shell)
  --max-ticks N  --no-progress-ticks N  --max-fix-attempts N  --inner-loop-max N
  --wall-clock SECONDS  --budget-usd X  --max-call-usd X  --agent-timeout SECONDS  --test-timeout SECONDS
  --strict-questions                 parked open questions block convergence too
  --json                             print the journal's events as NDJSON instead of text
`;

/** Renders loop progress: phase markers and tick lines on a terminal, or journal events as NDJSON with --json. */
export function progressPrinter(io: CliIo, json: boolean): (progress: LoopProgress) => void {
  return (progress) => {
    if (json) {
      if (progress.kind === 'event') io.stdout(`${JSON.stringify(progress.event)}\n`);
      return;
    }
    if (progress.kind === 'marker' && progress.text !== '') io.stdout(`${progress.text}\n`);
    if (progress.kind === 'tick') io.stdout(`${progress.line}\n`);
    if (progress.kind === 'event') {
      const line = describeEvent(progress.event);
      if (line !== undefined) io.stdout(`    ${line}\n`);
    }
  };
}

/** The journal events worth a line under the phase markers: red-checks, failed phases, violations, questions. */
function describeEvent(event: JournalEvent): string | undefined {
  switch (event.type) {
    case 'phase_ended':
      return event.outcome === 'failed' ? `${event.phase} failed: ${event.detail ?? 'no detail'}` : undefined;
    case 'violation':
      return `violation (${event.kind}${event.reverted ? ', reverted' : ''}): ${event.detail}`;
    case 'question_raised':
      return `question ${event.question.id} (${event.question.classification}): ${event.question.text}`;
    case 'x-loop.red_check': {
      const data = event.data as { failing?: string[]; vacuous?: string[] };
      const failing = data.failing?.length ?? 0;
      const vacuous = data.vacuous ?? [];
      return `red-check: ${String(failing)} new test(s) fail first as they should${vacuous.length > 0 ? `; ${String(vacuous.length)} already green (covered or vacuous, not carried into implement): ${vacuous.join('; ')}` : ''}`;
    }
    default:
      return undefined;
  }
}

/** Prints the final report (text mode) and returns the run's exit code. */
export function finish(io: CliIo, outcome: RunOutcome, json: boolean): number {
  if (!json) io.stdout(`\n${renderReport(outcome.ledger)}`);
  return outcome.exitCode;
}

/** Parses flags shared by run and resume; prints a clear message and returns undefined on a usage error. */
export function parseRunArgs(
  args: readonly string[],
  io: CliIo,
  extra: NonNullable<Parameters<typeof parseArgs>[0]>['options'] = {},
):
  | { values: RunFlagValues & Record<string, string | boolean | undefined>; positionals: string[] }
  | undefined {
  try {
    const parsed = parseArgs({
      args: [...args],
      options: { ...RUN_FLAGS, ...extra },
      strict: true,
      allowPositionals: true,
    });
    return {
      values: parsed.values as RunFlagValues & Record<string, string | boolean | undefined>,
      positionals: parsed.positionals,
    };
  } catch (error) {
    io.stderr(`allium-loop: ${(error as Error).message}\n`);
    return undefined;
  }
}

/** Loads config and builds settings, reporting config and flag errors; `undefined` means "exit 2". */
export async function settingsFor(values: RunFlagValues, io: CliIo): Promise<RunSettings | undefined> {
  const config = await loadConfig(io.cwd);
  if (!config.ok) {
    io.stderr(`allium-loop: the config file is invalid:\n${config.issues.map((i) => `  ${i}`).join('\n')}\n`);
    return undefined;
  }
  try {
    return runSettings(values, config.value, io, progressPrinter(io, values.json === true));
  } catch (error) {
    if (error instanceof FlagError) {
      io.stderr(`allium-loop: ${error.message}\n`);
      return undefined;
    }
    throw error;
  }
}

/** Runs a loop operation, turning typed errors into a clear message and exit 1. */
export async function guarded(io: CliIo, work: () => Promise<number>): Promise<number> {
  try {
    return await work();
  } catch (error) {
    io.stderr(`allium-loop: ${formatError(error)}\n`);
    return ExitCode.failure;
  }
}

/** `allium-loop run "<goal>"`: the spec loop (modes `--verify`, `--stories`, `--state-file` are dispatched first). */
export function runCommand(
  modes?: (args: readonly string[], io: CliIo) => Promise<number | undefined>,
): Command {
  return {
    name: 'run',
    synopsis: 'run "<goal>" [options]',
    summary: 'Drive a goal to convergence against the spec.',
    run: async (args, io) => {
      const delegated = await modes?.(args, io);
      if (delegated !== undefined) return delegated;
      const parsed = parseRunArgs(args, io, { entry: { type: 'string' } });
      if (parsed === undefined) return ExitCode.usage;
      if (parsed.values.help === true) {
        io.stdout(RUN_HELP);
        return ExitCode.ok;
      }
      const goal = parsed.positionals.join(' ').trim();
      if (goal === '' || parsed.positionals.length > 1) {
        io.stderr(
          `allium-loop run: give the goal as one quoted argument, e.g. allium-loop run "add gift cards to checkout".\n`,
        );
        return ExitCode.usage;
      }
      if (goal.length > MAX_GOAL_LENGTH) {
        io.stderr(
          `allium-loop run: the goal is ${String(goal.length)} characters; keep it under ${String(MAX_GOAL_LENGTH)} (put detail in the spec).\n`,
        );
        return ExitCode.usage;
      }
      const entry = parsed.values['entry'] as string | undefined;
      if (entry !== undefined && !(ENTRY_POINTS as readonly string[]).includes(entry)) {
        io.stderr(`allium-loop run: --entry takes one of ${ENTRY_POINTS.join(', ')}, not '${entry}'.\n`);
        return ExitCode.usage;
      }
      const settings = await settingsFor(parsed.values, io);
      if (settings === undefined) return ExitCode.usage;
      return guarded(io, async () =>
        finish(
          io,
          // The goal is redacted once, here: the ledger, the prompts and every echo of it see the same text.
          await startRun(createRedactor(io.env).text(goal), settings, entry as EntryPoint | undefined),
          parsed.values.json === true,
        ),
      );
    },
  };
}

/**
 * `allium-loop resume <slug>`: continues a run from its ledger in this (fresh) process. `modes` takes the runs of
 * the other loop modes (`--verify`, `--stories`, `--state-file`) and returns `undefined` for spec-loop runs.
 */
export function resumeCommand(
  modes?: (args: readonly string[], io: CliIo) => Promise<number | undefined>,
): Command {
  return {
    name: 'resume',
    synopsis: 'resume <slug> [options]',
    summary: 'Continue a run from its ledger in a fresh process.',
    run: async (args, io) => {
      const delegated = await modes?.(args, io);
      if (delegated !== undefined) return delegated;
      const parsed = parseRunArgs(args, io, { 'on-drift': { type: 'string' } });
      if (parsed === undefined) return ExitCode.usage;
      const [slug, ...rest] = parsed.positionals;
      if (slug === undefined || rest.length > 0) {
        io.stderr(
          "allium-loop resume: name one run, e.g. allium-loop resume add-gift-cards (see 'allium-loop list').\n",
        );
        return ExitCode.usage;
      }
      const onDrift = parsed.values['on-drift'] as string | undefined;
      if (onDrift !== undefined && !DRIFT_POLICIES.includes(onDrift)) {
        io.stderr(
          `allium-loop resume: --on-drift takes one of ${DRIFT_POLICIES.join(', ')}, not '${onDrift}'.\n`,
        );
        return ExitCode.usage;
      }
      const settings = await settingsFor(parsed.values, io);
      if (settings === undefined) return ExitCode.usage;
      const withDrift = onDrift === undefined ? settings : { ...settings, onDrift: onDrift as DriftPolicy };
      return guarded(io, async () =>
        finish(io, await resumeRun(slug, withDrift), parsed.values.json === true),
      );
    },
  };
}

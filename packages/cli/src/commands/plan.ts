import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { planSlices, renderPlanMermaid, renderPlanText, type Plan } from '@allium-loop/decomposer';
import { detectEntry, type EntryDecision } from '@allium-loop/entry';
import { AlliumLoopError } from '@allium-loop/errors';
import { analyzeSpecs, type SpecAnalysis, type SpecSource } from '@allium-loop/allium';
import { discoverTestCommand, findSpecFiles, probeProject } from '@allium-loop/verify';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';

/** What the plan command reads of an analysis: the graph, and the diagnostics to warn about errors. */
export type GraphAnalysis = Pick<SpecAnalysis, 'graph' | 'diagnostics'>;

/** What the plan command needs besides its arguments and io: the spec analysis (real one by default). */
export interface PlanDeps {
  readonly analyze: (sources: readonly SpecSource[]) => GraphAnalysis;
}

const SYNOPSIS = 'plan [--goal "..."] [--json | --mermaid]';

const HELP = [
  `Usage: allium-loop ${SYNOPSIS}`,
  '',
  'Show how the spec in this directory would be split into slices and in which order, without running anything.',
  'The plan covers the whole spec; during a run the first gather tick narrows it to what the goal touches.',
  '',
  'Options:',
  '  --goal "<text>"  Also say where a run with this goal would start (entry detection).',
  '  --json           Print the plan (and the entry decision) as one JSON document.',
  '  --mermaid        Print the slice graph as a Mermaid flowchart.',
  '  -h, --help       Show this help.',
  '',
].join('\n');

interface PlanArgs {
  readonly goal: string | undefined;
  readonly format: 'text' | 'json' | 'mermaid';
  readonly help: boolean;
}

function parsePlanArgs(args: readonly string[]): PlanArgs | string {
  try {
    const { values, positionals } = parseArgs({
      args: [...args],
      options: {
        goal: { type: 'string' },
        json: { type: 'boolean' },
        mermaid: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 0) return `unexpected argument '${positionals[0]!}'`;
    if (values.json === true && values.mermaid === true)
      return '--json and --mermaid cannot be used together';
    if (values.goal?.trim() === '') return '--goal needs a non-empty goal';
    const format = values.json === true ? 'json' : values.mermaid === true ? 'mermaid' : 'text';
    return { goal: values.goal, format, help: values.help === true };
  } catch (error) {
    return (error as Error).message;
  }
}

async function hasTestCommand(cwd: string): Promise<boolean> {
  try {
    await discoverTestCommand(cwd);
    return true;
  } catch (error) {
    if (AlliumLoopError.is(error) && error.code === 'verify.no_test_command') return false;
    throw error;
  }
}

async function decideEntry(cwd: string, goal: string): Promise<EntryDecision> {
  const state = await probeProject({ cwd, hasTestCommand: () => hasTestCommand(cwd) });
  return detectEntry(state, goal);
}

function render(
  format: PlanArgs['format'],
  plan: Plan,
  files: readonly string[],
  entry?: EntryDecision,
): string {
  if (format === 'mermaid') return renderPlanMermaid(plan);
  if (format === 'json')
    return `${JSON.stringify({ specFiles: files, entry: entry ?? null, plan }, null, 2)}\n`;
  const header = entry === undefined ? '' : `${entry.announcement}\n`;
  return `${header}Spec: ${files.join(', ')}\n${renderPlanText(plan)}`;
}

async function runPlan(args: readonly string[], io: CliIo, deps: PlanDeps): Promise<number> {
  const parsed = parsePlanArgs(args);
  if (typeof parsed === 'string') {
    io.stderr(`allium-loop plan: ${parsed}.\nRun 'allium-loop plan --help' for usage.\n`);
    return ExitCode.usage;
  }
  if (parsed.help) {
    io.stdout(HELP);
    return ExitCode.ok;
  }
  const files = await findSpecFiles(io.cwd);
  if (files.length === 0) {
    io.stderr(
      `allium-loop plan: no .allium spec found under ${io.cwd}.\n` +
        `  Run it where your spec lives, or start one with: allium-loop run "<goal>" (it elicits a spec first).\n`,
    );
    return ExitCode.failure;
  }
  const sources = await Promise.all(
    files.map(async (path) => ({ path, text: await readFile(join(io.cwd, path), 'utf8') })),
  );
  const analysis = deps.analyze(sources);
  const errors = analysis.diagnostics.filter((diagnostic) => diagnostic.severity === 'error').length;
  if (errors > 0)
    io.stderr(
      `allium-loop plan: the spec has ${errors} error${errors === 1 ? '' : 's'}; the plan may be incomplete ` +
        `(see allium-loop spec check).\n`,
    );
  const entry = parsed.goal === undefined ? undefined : await decideEntry(io.cwd, parsed.goal);
  io.stdout(render(parsed.format, planSlices(analysis.graph), files, entry));
  return ExitCode.ok;
}

/**
 * `allium-loop plan [--goal "..."] [--json | --mermaid]`: reads every `.allium` file under the working directory,
 * builds the dependency graph, and prints the decomposition of the whole spec (text, JSON or Mermaid); with
 * `--goal`, also the entry decision for that goal. Spec errors are reported on stderr as a warning (the plan is
 * made from what parsed). Exits 0 on success, 1 when no spec is found, 2 on a usage error.
 */
export function planCommand(deps: PlanDeps = { analyze: analyzeSpecs }): Command {
  return {
    name: 'plan',
    synopsis: SYNOPSIS,
    summary: 'Show the decomposition into slices without running.',
    run: (args, io) => runPlan(args, io, deps),
  };
}

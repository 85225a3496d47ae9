import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { planSlices, renderPlanMermaid, renderPlanText, type Plan } from '@allium-loop/decomposer';
import { detectEntry, type EntryDecision } from '@allium-loop/entry';
import { AlliumLoopError } from '@allium-loop/errors';
import type { DependencyGraph } from '@allium-loop/spec';
import { discoverTestCommand, findSpecFiles, probeProject } from '@allium-loop/verify';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';

/** One spec file as read from disk: its path relative to the working directory and its text. */
export interface SpecSource {
  readonly file: string;
  readonly text: string;
}

/** Builds the dependency graph of a spec set, or returns undefined when no graph builder is available. */
export type AnalyzeGraph = (sources: readonly SpecSource[]) => Promise<DependencyGraph | undefined>;

/** What the plan command needs besides its arguments and io. */
export interface PlanDeps {
  readonly analyze: AnalyzeGraph;
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

/**
 * The graph builder of `@allium-loop/spec` (`analyzeSpecs(sources) → { graph }`), looked up at run time so this
 * command works in builds where the spec package does not provide it yet; then it resolves to undefined.
 */
export const analyzeWithSpecPackage: AnalyzeGraph = async (sources) => {
  const spec = (await import('@allium-loop/spec')) as Record<string, unknown>;
  const analyzeSpecs = spec['analyzeSpecs'];
  if (typeof analyzeSpecs !== 'function') return undefined;
  const result = (analyzeSpecs as (input: readonly SpecSource[]) => { graph: DependencyGraph })(sources);
  return result.graph;
};

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
    files.map(async (file) => ({ file, text: await readFile(join(io.cwd, file), 'utf8') })),
  );
  const graph = await deps.analyze(sources);
  if (graph === undefined) {
    io.stderr('allium-loop plan: this build cannot build the spec dependency graph yet (no analyzeSpecs).\n');
    return ExitCode.failure;
  }
  const entry = parsed.goal === undefined ? undefined : await decideEntry(io.cwd, parsed.goal);
  io.stdout(render(parsed.format, planSlices(graph), files, entry));
  return ExitCode.ok;
}

/**
 * `allium-loop plan [--goal "..."] [--json | --mermaid]`: reads every `.allium` file under the working directory,
 * builds the dependency graph, and prints the decomposition of the whole spec (text, JSON or Mermaid); with
 * `--goal`, also the entry decision for that goal. Exits 0 on success, 1 when no spec is found or no graph can be
 * built, 2 on a usage error.
 */
export function planCommand(deps: PlanDeps = { analyze: analyzeWithSpecPackage }): Command {
  return {
    name: 'plan',
    synopsis: SYNOPSIS,
    summary: 'Show the decomposition into slices without running.',
    run: (args, io) => runPlan(args, io, deps),
  };
}

import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  planChange,
  planSlices,
  renderPlanMermaid,
  renderPlanText,
  type Plan,
} from '@allium-loop/decomposer';
import { detectEntry, type EntryDecision } from '@allium-loop/entry';
import { AlliumLoopError, formatError } from '@allium-loop/errors';
import { createRedactor } from '@allium-loop/ledger/redact';
import { analyzeSpecs, type SpecAnalysis, type SpecSource } from '@allium-loop/allium';
import { discoverTestCommand, findSpecFiles, probeProject } from '@allium-loop/verify';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';

/**
 * What the plan command reads of an analysis: the graph, the diagnostics to warn about errors, the inventory a
 * `--since` plan diffs, and the open questions a stored plan records.
 */
export type GraphAnalysis = Pick<SpecAnalysis, 'graph' | 'diagnostics' | 'inventory'> &
  Partial<Pick<SpecAnalysis, 'openQuestions'>>;

/** What the plan command needs besides its arguments and io: the spec analysis (real one by default). */
export interface PlanDeps {
  readonly analyze: (sources: readonly SpecSource[]) => GraphAnalysis;
}

const SYNOPSIS =
  'plan [--goal "..."] [--since <rev>] [--json | --mermaid | --github-matrix [--wave N]] [--plan-out <file>]';

const HELP = [
  `Usage: allium-loop ${SYNOPSIS}`,
  '',
  'Show how the spec in this directory would be split into slices and in which order, without running anything.',
  'The plan covers the whole spec; during a run the first gather tick narrows it to what the goal touches.',
  'With --since, the plan covers only what the spec change since that git revision touched, as a run plans it.',
  '',
  'Options:',
  '  --goal "<text>"  Also say where a run with this goal would start (entry detection).',
  '  --since REV      Plan only the constructs the spec change since REV (branch, tag, commit) added, changed',
  '                   or removed, with the spec now as the graph.',
  '  --json           Print the plan (and the entry decision) as one JSON document.',
  '  --mermaid        Print the slice graph as a Mermaid flowchart.',
  '  --github-matrix  Print the GitHub Actions matrix of one wave: {"include":[{"wave":1,"slice":…,"key":…}]}',
  '                   on one line, for strategy.matrix (an empty include past the last wave).',
  '  --wave N         The wave --github-matrix prints (default 1).',
  '  --plan-out FILE  Also store the plan (with --goal) for run --slice <id> --plan FILE and merge-ledgers.',
  '  -h, --help       Show this help.',
  '',
].join('\n');

interface PlanArgs {
  readonly goal: string | undefined;
  readonly format: 'text' | 'json' | 'mermaid' | 'github-matrix';
  readonly wave: number;
  readonly planOut: string | undefined;
  readonly since: string | undefined;
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
        'github-matrix': { type: 'boolean' },
        wave: { type: 'string' },
        'plan-out': { type: 'string' },
        since: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 0) return `unexpected argument '${positionals[0]!}'`;
    const formats = (['json', 'mermaid', 'github-matrix'] as const).filter((f) => values[f] === true);
    if (formats.length > 1) return `--${formats[0]!} and --${formats[1]!} cannot be used together`;
    if (values.goal?.trim() === '') return '--goal needs a non-empty goal';
    if (values.wave !== undefined && formats[0] !== 'github-matrix')
      return '--wave goes with --github-matrix';
    const wave = values.wave === undefined ? 1 : Number(values.wave);
    if (!Number.isInteger(wave) || wave < 1 || !/^\d+$/.test(values.wave ?? '1'))
      return `--wave takes a wave number from 1, not '${values.wave ?? ''}'`;
    if (values['plan-out'] !== undefined && values.goal === undefined)
      return '--plan-out needs --goal "<the goal the slices work on>"';
    if (values['plan-out']?.trim() === '') return '--plan-out needs a file name';
    if (values.since?.trim() === '') return '--since needs a git revision (a branch, tag or commit)';
    return {
      goal: values.goal,
      format: formats[0] ?? 'text',
      wave,
      planOut: values['plan-out'],
      since: values.since,
      help: values.help === true,
    };
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
  format: Exclude<PlanArgs['format'], 'github-matrix'>,
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

/** The plan of the spec change since `rev` (`undefined`: it touched nothing); throws for an unknown revision. */
async function planSince(
  rev: string,
  analysis: GraphAnalysis,
  io: CliIo,
  deps: PlanDeps,
): Promise<Plan | undefined> {
  const { specSourcesAt } = await import('@allium-loop/orchestrator');
  return planChange(deps.analyze(await specSourcesAt(io.cwd, rev)), analysis);
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
  let plan: Plan | undefined;
  try {
    plan =
      parsed.since === undefined
        ? planSlices(analysis.graph)
        : await planSince(parsed.since, analysis, io, deps);
  } catch (error) {
    if (!AlliumLoopError.is(error) || error.code !== 'git.unknown_revision') throw error;
    io.stderr(`allium-loop plan: ${formatError(error)}\n`);
    return ExitCode.usage;
  }
  if (plan === undefined) {
    io.stderr(
      `allium-loop plan: the spec change since ${parsed.since!} touches no construct; there is nothing to plan.\n`,
    );
    return ExitCode.failure;
  }
  if (parsed.format === 'github-matrix' || parsed.planOut !== undefined) {
    const { githubMatrix, gitHead, storePlan, writeStoredPlan } = await import('@allium-loop/orchestrator');
    const stored = storePlan({
      // The goal is redacted once, here, as `run` does: every slice run and ledger sees the same text.
      goal: createRedactor(io.env).text(parsed.goal ?? 'slices of the spec'),
      base: await gitHead(io.cwd),
      specFiles: files,
      questions: (analysis.openQuestions ?? []).map((question) => question.text),
      plan,
    });
    if (parsed.planOut !== undefined) await writeStoredPlan(resolve(io.cwd, parsed.planOut), stored);
    if (parsed.format === 'github-matrix') {
      io.stdout(`${JSON.stringify(githubMatrix(stored, parsed.wave))}\n`);
      return ExitCode.ok;
    }
  }
  const entry = parsed.goal === undefined ? undefined : await decideEntry(io.cwd, parsed.goal);
  io.stdout(render(parsed.format, plan, files, entry));
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

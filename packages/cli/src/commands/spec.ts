import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  analyzeSpecs,
  formatDiagnostic,
  type DependencyGraph,
  type SpecAnalysis,
  type SpecSource,
} from '@allium-loop/allium';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';

const USAGE = `Usage:
  allium-loop spec check [paths...] [--json]       diagnostics; exits 1 when there are errors
  allium-loop spec graph [paths...] [--json | --mermaid]
  allium-loop spec questions [paths...] [--json]   open questions

Paths are .allium files or directories (searched recursively); the default is the current directory.
`;

const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git', '.allium-loop', 'dist']);

/** `allium-loop spec check|graph|questions`: the built-in spec tooling over the engine's own parser. */
export const specCommand: Command = {
  name: 'spec',
  synopsis: 'spec check|graph|questions [paths]',
  summary: 'Built-in spec tooling: diagnostics, graph, open questions.',
  run: runSpec,
};

interface SpecOptions {
  readonly json: boolean;
  readonly mermaid: boolean;
  readonly paths: readonly string[];
}

async function runSpec(args: readonly string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  if (action === '--help' || action === '-h') {
    io.stdout(USAGE);
    return ExitCode.ok;
  }
  if (action !== 'check' && action !== 'graph' && action !== 'questions') {
    io.stderr(
      `allium-loop spec: ${action === undefined ? 'missing action' : `unknown action '${action}'`}.\n${USAGE}`,
    );
    return ExitCode.usage;
  }
  const options = parseOptions(action, rest, io);
  if (options === undefined) return ExitCode.usage;
  const sources = await loadSources(options.paths.length === 0 ? ['.'] : options.paths, io.cwd);
  if (typeof sources === 'string') {
    io.stderr(`allium-loop spec ${action}: ${sources}\n`);
    return ExitCode.usage;
  }
  const analysis = analyzeSpecs(sources);
  if (action === 'check') return renderCheck(analysis, options, io);
  if (action === 'graph') return renderGraph(analysis.graph, options, io);
  return renderQuestions(analysis, options, io);
}

function parseOptions(action: string, rest: readonly string[], io: CliIo): SpecOptions | undefined {
  try {
    const { values, positionals } = parseArgs({
      args: [...rest],
      options: {
        json: { type: 'boolean' },
        mermaid: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
    if (values.mermaid === true && action !== 'graph')
      throw new Error("'--mermaid' applies to 'spec graph' only");
    if (values.mermaid === true && values.json === true)
      throw new Error("choose one of '--json' and '--mermaid'");
    return { json: values.json === true, mermaid: values.mermaid === true, paths: positionals };
  } catch (error) {
    io.stderr(
      `allium-loop spec ${action}: ${(error as Error).message}\nRun 'allium-loop spec --help' for usage.\n`,
    );
    return undefined;
  }
}

/** Reads every `.allium` file under the given paths; a string is the error to show. */
async function loadSources(paths: readonly string[], cwd: string): Promise<SpecSource[] | string> {
  const files: string[] = [];
  for (const path of paths) {
    const absolute = resolve(cwd, path);
    const info = await stat(absolute).catch(() => undefined);
    if (info === undefined) return `cannot read '${path}': no such file or directory`;
    if (info.isDirectory()) files.push(...(await findSpecs(absolute)));
    else files.push(absolute);
  }
  if (files.length === 0) return `no .allium files under ${paths.join(', ')}`;
  const unique = [...new Set(files)].sort();
  return Promise.all(
    unique.map(async (file) => ({ path: relative(cwd, file) || file, text: await readFile(file, 'utf8') })),
  );
}

async function findSpecs(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true });
  const found: string[] = [];
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory() && !SKIPPED_DIRECTORIES.has(entry.name)) found.push(...(await findSpecs(path)));
    else if (entry.isFile() && entry.name.endsWith('.allium')) found.push(path);
  }
  return found;
}

function renderCheck(analysis: SpecAnalysis, options: SpecOptions, io: CliIo): number {
  const count = (severity: string): number =>
    analysis.diagnostics.filter((d) => d.severity === severity).length;
  const errors = count('error');
  if (options.json) {
    io.stdout(
      `${JSON.stringify({ files: analysis.specs.map((s) => s.file), diagnostics: analysis.diagnostics }, null, 2)}\n`,
    );
  } else {
    for (const diagnostic of analysis.diagnostics) io.stdout(`${formatDiagnostic(diagnostic)}\n`);
    const files = analysis.specs.length;
    io.stdout(
      `${files} file${files === 1 ? '' : 's'}: ${errors} error(s), ${count('warning')} warning(s), ${count('info')} info(s)\n`,
    );
  }
  return errors > 0 ? ExitCode.failure : ExitCode.ok;
}

function renderGraph(graph: DependencyGraph, options: SpecOptions, io: CliIo): number {
  if (options.json) io.stdout(`${JSON.stringify(graph, null, 2)}\n`);
  else if (options.mermaid) io.stdout(toMermaid(graph));
  else {
    for (const node of graph.nodes) io.stdout(`${node.id}  ${node.location.file}:${node.location.line}\n`);
    for (const edge of graph.edges) {
      const { from, to } = edge.evidence;
      io.stdout(
        `${edge.from} -> ${edge.to}  ${edge.kind} ${edge.via}  (${from.file}:${from.line} → ${to.file}:${to.line})\n`,
      );
    }
  }
  return ExitCode.ok;
}

/** A Mermaid flowchart: rules as boxes, entities as cylinders, surfaces as rounded boxes; edges labelled. */
export function toMermaid(graph: DependencyGraph): string {
  const key = (id: string): string => id.replace(/[^A-Za-z0-9_]/g, '_');
  const shape = { rule: ['[', ']'], entity: ['[(', ')]'], surface: ['(', ')'] } as const;
  const lines = ['flowchart LR'];
  for (const node of graph.nodes) {
    const [open, close] = shape[node.kind];
    lines.push(`  ${key(node.id)}${open}"${node.kind} ${node.name}"${close}`);
  }
  for (const edge of graph.edges) {
    const arrow = edge.kind === 'trigger' || edge.kind === 'timeout' ? '==>' : '-->';
    lines.push(`  ${key(edge.from)} ${arrow}|"${edge.kind} ${edge.via}"| ${key(edge.to)}`);
  }
  return `${lines.join('\n')}\n`;
}

function renderQuestions(analysis: SpecAnalysis, options: SpecOptions, io: CliIo): number {
  if (options.json) {
    io.stdout(`${JSON.stringify(analysis.openQuestions, null, 2)}\n`);
    return ExitCode.ok;
  }
  for (const question of analysis.openQuestions) {
    const { file, line, col } = question.location;
    io.stdout(`${file}:${line}:${col} ${question.text}\n`);
  }
  io.stdout(`${analysis.openQuestions.length} open question(s)\n`);
  return ExitCode.ok;
}

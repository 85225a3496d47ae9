import { isAscii } from 'node:buffer';
import { readFile as readFileCallback, readFileSync, Stats, stat as statCallback } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { getSystemErrorMap, parseArgs, promisify } from 'node:util';
import {
  analyzeSpecs,
  checkReports,
  formatDiagnostic,
  modelReport,
  planReport,
  writeReferenceJson,
  type DependencyGraph,
  type SpecAnalysis,
  type ReportSource,
  type UseLocator,
} from '@allium-loop/allium';
// The walker alone: the package's index would load the test runners, execa and zod (spec check's start-up).
import { FOLLOWED_LINKS_LIMIT, realPath, systemPath, walkProject } from '@allium-loop/verify/walk-project';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { tuneV8ForOneCheck } from './v8-tuning.js';

// fs/promises' stat and readFile from the callback API: Node 20 loads fs/promises with readline, its file streams and
// its watchers, which `spec` never uses (6 ms of an empty spec's check with the two changes in process-io.ts and
// spec-loader.ts; tools/bench/spec/README.md, ninth pass). Regular files are read synchronously: the callback
// `readFile` loads a module of its own when first called (2 ms of an empty spec's check, eleventh pass), and `spec`
// has nothing else to do meanwhile. Anything else named on the command line (a FIFO, a device) is read
// asynchronously, so that Ctrl-C still ends a read that never completes.
const stat = promisify(statCallback);
const readFile = promisify(readFileCallback);

const USAGE = `Usage:
  allium-loop spec check [paths...] [--json]     diagnostics; exits 1 on any error or warning
  allium-loop spec analyse [paths...] [--json]   diagnostics and process findings; exits 1 on findings
  allium-loop spec model <file> [--json]         the domain model; exits 1 when the file does not parse
  allium-loop spec plan <file> [--json]          test obligations (ids, categories, spans, dependencies);
                                                 exits 1 when the file does not parse
  allium-loop spec graph [paths...] [--json | --mermaid]
  allium-loop spec questions [paths...] [--json] open questions

Paths are .allium files or directories (searched recursively); the default is the current directory.
With --json, check and analyse print one JSON object per file and model and plan one object, as the
reference 'allium' CLI does (model always prints JSON). Exit 2 when no .allium file is found.
`;

const ACTIONS = new Set(['check', 'analyse', 'model', 'plan', 'graph', 'questions']);

/**
 * `allium-loop spec check|analyse|model|plan|graph|questions`: the built-in spec tooling over the engine's own
 * parser.
 */
export const specCommand: Command = {
  name: 'spec',
  synopsis: 'spec check|analyse|model|plan|graph|questions [paths]',
  summary:
    'Built-in spec tooling: diagnostics, findings, domain model, test obligations, graph, open questions.',
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
  if (action === undefined || !ACTIONS.has(action)) {
    io.stderr(
      `allium-loop spec: ${action === undefined ? 'missing action' : `unknown action '${action}'`}.\n${USAGE}`,
    );
    return ExitCode.usage;
  }
  const options = parseOptions(action, rest, io);
  if (options === undefined) return ExitCode.usage;
  if ((action === 'model' || action === 'plan') && options.paths.length !== 1) {
    io.stderr(
      `allium-loop spec ${action}: expects exactly one file.\nRun 'allium-loop spec --help' for usage.\n`,
    );
    return ExitCode.usage;
  }
  tuneV8ForOneCheck();
  // `model` and `plan` read the one file named: a folder is refused, as the reference refuses it (exit 1), rather
  // than one of its files picked.
  const project = options.paths.length === 0;
  const loaded = await loadSources(project ? [''] : options.paths, io.cwd, {
    folders: action !== 'model' && action !== 'plan',
    referenceOrder: action === 'check' || action === 'analyse',
    project,
  });
  for (const problem of loaded.unreadable) io.stderr(`allium-loop spec ${action}: ${problem}\n`);
  const sources = loaded.sources;
  if (sources.length === 0) {
    if (loaded.unreadable.length > 0) return ExitCode.failure;
    io.stderr(`allium-loop spec ${action}: no .allium files under ${options.paths.join(', ') || '.'}\n`);
    return ExitCode.usage;
  }
  const unreadable = loaded.unreadable.length > 0;
  if (action === 'check' || action === 'analyse')
    return renderReports(action, sources, options, io, unreadable);
  if (action === 'model') {
    const { report, exitCode } = modelReport(sources[0] as ReportSource);
    printJson(report, io);
    return exitCode;
  }
  if (action === 'plan') {
    const { report, exitCode } = planReport(sources[0] as ReportSource);
    if (options.json) printJson(report, io);
    else {
      for (const diagnostic of report.diagnostics) io.stdout(`${formatDiagnostic(diagnostic)}\n`);
      for (const o of report.obligations) io.stdout(`${o.id}  ${o.description}\n`);
      io.stdout(`${report.obligations.length} obligation(s)\n`);
    }
    return exitCode;
  }
  // The graph and the open questions are the engine's own: a file named twice counts once, under its first name.
  const seen = new Set<string | undefined>();
  const analysis = analyzeSpecs(sources.filter((source) => !seen.has(source.key) && seen.add(source.key)));
  if (action === 'graph') return renderGraph(analysis.graph, options, io);
  return renderQuestions(analysis, options, io);
}

/**
 * Prints a report as the reference does, in pieces of about 64 KB that end at line breaks (`writeReferenceJson`): a
 * big report (2 MB at 50k lines) is then never one string, nor copied whole by the redactor and into a write buffer.
 * Pretty JSON escapes every line break inside a string, so no secret the redactor looks for spans two pieces (its
 * patterns match within a line; a PEM key or an environment value with a line break inside a JSON string is one
 * line here).
 */
function printJson(report: unknown, io: CliIo): void {
  let last = '';
  writeReferenceJson(report, (piece) => {
    if (last !== '') io.stdout(last);
    last = piece;
  });
  io.stdout(`${last}\n`);
}

function parseOptions(action: string, rest: readonly string[], io: CliIo): SpecOptions | undefined {
  try {
    const { values, positionals } = plainOptions(rest) ?? parseArgs({ args: [...rest], ...SPEC_ARGS });
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

/** `spec`'s options, as `parseArgs` reads them. */
export const SPEC_ARGS = {
  options: {
    json: { type: 'boolean' },
    mermaid: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  },
  strict: true,
  allowPositionals: true,
} as const;

/**
 * What `parseArgs` with {@link SPEC_ARGS} returns for a command line of paths and `spec`'s own flags only, each spelled
 * out (`--json`, `--mermaid`, `--help`, `-h`; a path is anything not starting with `-`, or `-` itself); `undefined`
 * for any other, which `parseArgs` then reads, errors and all. The usual command line thus never loads Node's
 * argument parser, a module of its own (2 ms of an empty spec's check, tools/bench/spec/README.md, eleventh pass).
 */
export function plainOptions(
  args: readonly string[],
): { values: { json?: boolean; mermaid?: boolean; help?: boolean }; positionals: string[] } | undefined {
  const values: { json?: boolean; mermaid?: boolean; help?: boolean } = {};
  const positionals: string[] = [];
  for (const arg of args) {
    if (arg === '--json') values.json = true;
    else if (arg === '--mermaid') values.mermaid = true;
    else if (arg === '--help' || arg === '-h') values.help = true;
    else if (arg === '-' || !arg.startsWith('-')) positionals.push(arg);
    else return undefined;
  }
  return { values, positionals };
}

/** No directory skipped: a folder the user names is searched whole (see {@link loadSources}). */
const NO_DIRECTORIES: ReadonlySet<string> = new Set();

/**
 * Every `.allium` file under the given paths, in the order the paths were given (a directory's files as the file
 * system lists them for `check` and `analyse`, else sorted), each with its real path as its key, and the paths that
 * could not be read. `model` and `plan` (not `folders`) take files only. Directories are searched by the engine's one
 * project walker (`walkProject`): a folder the user names, whole, as the reference checker searches it (`target/`,
 * `build/` or `node_modules/` may hold a project's specs: one repository keeps its specs for each target language
 * under `target/`), its symbolic links taken for what they lead to, as the reference takes them (a folder searched,
 * unless the walk is inside it already; a file listed; a broken one listed, then unreadable); no path at all, the
 * project, without the directories the walker skips (dependencies, build output, caches, the loop's state) and
 * without following or listing any link, as everywhere else in the engine.
 */
async function loadSources(
  paths: readonly string[],
  cwd: string,
  {
    folders,
    referenceOrder,
    project,
  }: { readonly folders: boolean; readonly referenceOrder: boolean; readonly project: boolean },
): Promise<{ sources: ReportSource[]; unreadable: string[] }> {
  // Each file named as the reference names it: a file as it was given, a directory's file as the directory was given
  // followed by the file's path inside it (`./specs` gives `./specs/a.allium`). No path at all ('', where the
  // reference finds no file) is the working directory, its files named from there; an empty path given (an unset
  // variable in a script) names no file, as the reference reads it, rather than the project. A file named twice is
  // reported twice, as the reference reports it, but read once.
  const named: { absolute: string; path: string }[] = [];
  // The paths given that are not regular files (a FIFO, a device): read asynchronously (see `readFile` above).
  const special = new Set<string>();
  const unreadable: string[] = [];
  const under = (folder: string, inside: string): string =>
    folder === '' || folder.endsWith('/') ? `${folder}${inside}` : `${folder}/${inside}`;
  for (const path of paths) {
    const absolute = beside(cwd, path);
    const info =
      path !== '' || project
        ? await stat(systemPath(absolute) ?? absolute).catch((error: unknown) => error)
        : undefined;
    if (!(info instanceof Stats)) unreadable.push(`cannot read '${path}': ${systemReason(info)}`);
    else if (info.isDirectory() && !folders)
      unreadable.push(`cannot read '${path}': it is a directory, not a file`);
    else if (info.isDirectory()) {
      // Walked from its real path, so that the files' own paths need no `..` resolved by name (see beside).
      const root = realPath(absolute) ?? absolute;
      // A folder named is searched whole, and for `check` and `analyse` in the order the reference walks it (the
      // file system's, which is no order: byte-identical output on the same machine); the project and the engine's
      // own commands, sorted.
      const walk = await walkProject(
        root,
        path === ''
          ? {}
          : { skip: NO_DIRECTORIES, order: referenceOrder ? 'directory' : 'sorted', followLinks: true },
      );
      for (const file of walk.files)
        if (isSpecName(file)) named.push({ absolute: join(root, file), path: under(path, file) });
      for (const folder of walk.unreadable) unreadable.push(`cannot read '${under(path, folder) || '.'}'`);
      if (walk.linkLimitAt !== undefined)
        unreadable.push(
          `not searched past '${under(path, walk.linkLimitAt)}': ${FOLLOWED_LINKS_LIMIT} folders reached through symbolic links already`,
        );
    } else {
      named.push({ absolute, path });
      if (!info.isFile()) special.add(absolute);
    }
  }
  // Each file read once, however often it is named: its text and key, or why it cannot be read (none when it cannot be
  // read at all; a file that is not UTF-8 is refused, as the reference refuses it: "stream did not contain valid UTF-8").
  const texts = new Map<string, { text: string; key: string } | { text?: undefined; why?: string }>();
  const sources: ReportSource[] = [];
  for (const { absolute, path } of named) {
    let read = texts.get(absolute);
    if (read === undefined) {
      const bytes = special.has(absolute)
        ? await readFile(absolute).catch(() => undefined)
        : readBytes(absolute);
      const text = bytes === undefined ? undefined : decodeText(bytes);
      // A file is keyed by its real path, as the reference keys its check set: however it is named, `use` paths find it.
      read =
        text !== undefined
          ? { text, key: realPath(absolute) ?? absolute }
          : bytes === undefined
            ? {}
            : { why: 'it is not UTF-8 text' };
      texts.set(absolute, read);
    }
    if (read.text !== undefined) sources.push({ path, text: read.text, key: read.key });
    else unreadable.push(`cannot read '${path}'${read.why === undefined ? '' : `: ${read.why}`}`);
  }
  return { sources, unreadable };
}

/**
 * `path` as the system reads it from `cwd`: not normalised, so that `link/../a.allium` is the `a.allium` beside the
 * folder the link leads to and `a.allium/` names no file, as the reference (and every other program) reads them,
 * where Node's `resolve` would take `..` back by name and drop the final slash.
 */
function beside(cwd: string, path: string): string {
  if (isAbsolute(path)) return path;
  return cwd.endsWith('/') ? `${cwd}${path}` : `${cwd}/${path}`;
}

/**
 * Where a `use` path leads, found as the reference finds it: the folder of the importer's name as it was given joined
 * with the path, then its canonical path (so `..` after a symbolic link is taken from where the link leads, and a file
 * linked into a folder imports from that folder); undefined when that names no file. The check set is keyed by real
 * paths too (see loadSources). Each answer is kept for the run.
 */
function useLocator(cwd: string): UseLocator {
  const found = new Map<string, string | undefined>();
  return (importer, path) => {
    const target = isAbsolute(path) ? path : `${importer.slice(0, importer.lastIndexOf('/') + 1)}${path}`;
    if (!found.has(target)) found.set(target, realPath(beside(cwd, target)));
    return found.get(target);
  };
}

/** Why the system refused a path, in its own words (`no such file or directory`, `not a directory`, …). */
function systemReason(error: unknown): string {
  const errno = (error as { errno?: unknown } | undefined)?.errno;
  const known = typeof errno === 'number' ? getSystemErrorMap().get(errno) : undefined;
  return known?.[1] ?? 'no such file or directory';
}

/**
 * A file found in a folder is a spec when its extension is `.allium`, as Rust's `Path::extension` reads it for the
 * reference: a file named `.allium` alone has none (a file named on the command line is read whatever its name).
 */
const isSpecName = (file: string): boolean =>
  file.endsWith('.allium') && !file.endsWith('/.allium') && file !== '.allium';

/** The bytes of `file`, or undefined when it cannot be read. */
function readBytes(file: string): Buffer | undefined {
  try {
    // A name that is not UTF-8 (`caf\xff.allium`), found in a folder or given on the command line, arrives with
    // U+FFFD in it; the reference reads that file and names it so, and so does this (see systemPath).
    return readFileSync(systemPath(file) ?? file);
  } catch {
    return undefined;
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A spec file's text, or undefined when its bytes are not UTF-8. A file of ASCII bytes only (almost every spec) is
 * decoded as Latin-1, which reads those bytes alike and skips the UTF-8 decoder (the 50k-line bench spec, 1.6 MB: 3.0
 * against 4.8 ms, medians of 21 fresh processes). A byte order mark stays in the text, as the reference keeps it.
 */
function decodeText(bytes: Buffer): string | undefined {
  if (isAscii(bytes)) return bytes.toString('latin1');
  try {
    return UTF8.decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * `check` / `analyse`: with --json one reference-shaped object per file; otherwise one line per diagnostic and
 * finding plus a summary. An unreadable path makes the exit 1, as in the reference.
 */
function renderReports(
  action: 'check' | 'analyse',
  sources: readonly ReportSource[],
  options: SpecOptions,
  io: CliIo,
  unreadable: boolean,
): number {
  const { reports, exitCode } = checkReports(sources, action, useLocator(io.cwd));
  if (options.json) {
    for (const report of reports) printJson(report, io);
  } else {
    const counts = { error: 0, warning: 0, info: 0 };
    let findings = 0;
    for (const report of reports) {
      for (const diagnostic of report.diagnostics) {
        counts[diagnostic.severity] += 1;
        io.stdout(`${formatDiagnostic(diagnostic)}\n`);
      }
      for (const finding of report.findings) {
        findings += 1;
        io.stdout(`${report.spec_file}: ${finding.type} ${finding.summary}\n`);
      }
    }
    const files = reports.length;
    const found = action === 'analyse' ? `, ${findings} finding(s)` : '';
    io.stdout(
      `${files} file${files === 1 ? '' : 's'}: ${counts.error} error(s), ${counts.warning} warning(s), ${counts.info} info(s)${found}\n`,
    );
  }
  return unreadable ? ExitCode.failure : exitCode;
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

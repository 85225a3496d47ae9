import type { Diagnostic } from '@allium-loop/allium';
import { execa } from 'execa';
import { findAllium } from './find-allium.js';
import { documentDiagnostics, toReferenceReport, type ReferenceReport } from './reference-output.js';
import { splitJsonDocuments } from './split-json-documents.js';

/** Where and how to run the reference CLI. */
export interface ReferenceCliOptions {
  /** The directory the CLI runs in; paths are passed as given. */
  readonly cwd: string;
  /** The environment (its `PATH` is searched for `allium`); defaults to the engine's. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Kill the CLI after this long (default 60 s). */
  readonly timeoutMs?: number;
}

/** The reference CLI is not on PATH: a normal state, not an error. */
export interface ReferenceNotAvailable {
  readonly available: false;
  readonly reason: string;
}

/** What `allium check`/`analyse` said about a set of spec files. */
export interface ReferenceCheckResult {
  readonly available: true;
  readonly binary: string;
  readonly command: 'check' | 'analyse';
  readonly reports: readonly ReferenceReport[];
  /** Output that could not be read (truncated JSON, stray text, a crash): the verdict is incomplete when non-empty. */
  readonly issues: readonly string[];
  /** Recorded for reports only: the verdict comes from `severity`, never from the exit code. */
  readonly exitCode: number | undefined;
}

/** What `allium plan`/`model` printed for one file. */
export interface ReferenceDocumentResult {
  readonly available: true;
  readonly binary: string;
  readonly document: unknown;
  readonly diagnostics: readonly Diagnostic[];
  readonly issues: readonly string[];
  readonly exitCode: number | undefined;
}

const NOT_AVAILABLE: ReferenceNotAvailable = {
  available: false,
  reason: 'the reference `allium` CLI is not on PATH (optional; install with `cargo install allium-cli`)',
};

/**
 * Runs `allium check` or `allium analyse` once over every path given (pass the whole spec directory: the CLI
 * resolves `use` only inside one check set) and reads the concatenated JSON documents it prints, one per file.
 * Returns "not available" when `allium` is not on PATH. Never throws; unreadable output becomes `issues`.
 */
export async function runReferenceCheck(
  command: 'check' | 'analyse',
  paths: readonly string[],
  options: ReferenceCliOptions,
): Promise<ReferenceCheckResult | ReferenceNotAvailable> {
  const binary = await findAllium(options.env);
  if (binary === undefined) return NOT_AVAILABLE;
  const run = await runBinary(binary, [command, ...paths], options);
  const { documents, unparsed } = splitJsonDocuments(run.stdout);
  const issues = [...run.issues];
  if (unparsed !== '') issues.push(`unreadable output: ${excerpt(unparsed)}`);
  const reports: ReferenceReport[] = [];
  for (const document of documents) {
    const report = toReferenceReport(document);
    if (typeof report === 'string') issues.push(report);
    else reports.push(report);
  }
  return { available: true, binary, command, reports, issues, exitCode: run.exitCode };
}

/**
 * Runs `allium plan` or `allium model` on one file and returns its JSON document and diagnostics. Returns "not
 * available" when `allium` is not on PATH. Never throws; unreadable output becomes `issues` and `document` is
 * `undefined`.
 */
export async function runReferenceDocument(
  command: 'plan' | 'model',
  file: string,
  options: ReferenceCliOptions,
): Promise<ReferenceDocumentResult | ReferenceNotAvailable> {
  const binary = await findAllium(options.env);
  if (binary === undefined) return NOT_AVAILABLE;
  const run = await runBinary(binary, [command, file], options);
  const { documents, unparsed } = splitJsonDocuments(run.stdout);
  const issues = [...run.issues];
  if (unparsed !== '') issues.push(`unreadable output: ${excerpt(unparsed)}`);
  if (documents.length !== 1) issues.push(`expected one JSON document, got ${String(documents.length)}`);
  const document = documents[0];
  return {
    available: true,
    binary,
    document,
    diagnostics: documentDiagnostics(document),
    issues,
    exitCode: run.exitCode,
  };
}

interface BinaryRun {
  readonly stdout: string;
  readonly exitCode: number | undefined;
  readonly issues: readonly string[];
}

async function runBinary(
  binary: string,
  args: readonly string[],
  options: ReferenceCliOptions,
): Promise<BinaryRun> {
  const result = await execa(binary, args, {
    cwd: options.cwd,
    env: { ...options.env },
    extendEnv: options.env === undefined,
    reject: false,
    timeout: options.timeoutMs ?? 60_000,
    stripFinalNewline: false,
    maxBuffer: 64 * 1024 * 1024,
  });
  const issues: string[] = [];
  if (result.timedOut) issues.push(`\`allium ${args[0]!}\` timed out`);
  else if (result.failed && result.exitCode === undefined)
    issues.push(`\`allium ${args[0]!}\` failed: ${result.shortMessage}`);
  if (result.stdout.trim() === '' && result.stderr.trim() !== '')
    issues.push(`stderr: ${excerpt(result.stderr)}`);
  return { stdout: result.stdout, exitCode: result.exitCode, issues };
}

function excerpt(text: string): string {
  const flat = text.trim().replace(/\s+/g, ' ');
  return flat.length > 120 ? `${flat.slice(0, 120)}…` : flat;
}

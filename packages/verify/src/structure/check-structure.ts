import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import {
  checkSpecs,
  collectOpenQuestions,
  parseSpec,
  type Diagnostic,
  type OpenQuestion,
  type Severity,
} from '@allium-loop/allium';
import { runReferenceCheck, type ReferenceCliOptions } from '../reference-cli/run-reference-cli.js';
import { findSpecFiles } from '../probe/probe-project.js';

/** A diagnostic with who reported it: the engine's parser, the reference CLI, or both. */
export interface SourcedDiagnostic extends Diagnostic {
  readonly source: 'engine' | 'reference' | 'both';
}

/** What the reference CLI contributed, or why it did not. */
export type ReferenceStatus =
  | { readonly status: 'not_available'; readonly reason: string }
  | {
      readonly status: 'ran';
      readonly binary: string;
      /** `allium analyse` findings (advisory; weed owns divergences). */
      readonly findings: number;
      /** Output that could not be read; the reference verdict is incomplete when non-empty. */
      readonly issues: readonly string[];
    };

/** The structural verdict on a project's specs. Errors block convergence; warnings are advisory. */
export interface StructureReport {
  /** The spec files checked, relative to `cwd`. */
  readonly specFiles: readonly string[];
  /** Engine and reference diagnostics, de-duplicated, sorted by file, line and column. */
  readonly diagnostics: readonly SourcedDiagnostic[];
  readonly errors: number;
  readonly warnings: number;
  /** Open questions counted by the engine's parser. */
  readonly openQuestions: readonly OpenQuestion[];
  readonly reference: ReferenceStatus;
}

/** Options of {@link checkStructure}. */
export interface CheckStructureOptions {
  readonly cwd: string;
  /** Spec files relative to `cwd`; by default every `*.allium` under it. */
  readonly specFiles?: readonly string[];
  /** Set to false to skip the reference CLI even when it is on PATH. */
  readonly useReference?: boolean;
  /** Environment for the reference CLI (its PATH is searched for `allium`). */
  readonly env?: ReferenceCliOptions['env'];
}

const RANK: Readonly<Record<Severity, number>> = { info: 0, warning: 1, error: 2 };

/**
 * Checks the project's specs: the engine's parser and structural checks over the whole check set, merged with
 * `allium check` (and `allium analyse` findings) when the reference CLI is on PATH. Reference diagnostics are
 * judged by `severity`, never by the CLI's exit code; the same finding from both (same file, line and code, or
 * the same line for syntax errors) is reported once, as `both`, with the stricter severity.
 * Throws only when a listed spec file cannot be read.
 */
export async function checkStructure(options: CheckStructureOptions): Promise<StructureReport> {
  const specFiles = options.specFiles ?? (await findSpecFiles(options.cwd));
  const parsed = await Promise.all(
    specFiles.map(async (file) => parseSpec(await readFile(join(options.cwd, file), 'utf8'), file)),
  );
  const engine = checkSpecs(parsed);
  const { reference, diagnostics: fromReference } =
    specFiles.length === 0 || options.useReference === false
      ? { reference: notRun(specFiles.length), diagnostics: [] }
      : await referenceDiagnostics(specFiles, options);
  const diagnostics = mergeDiagnostics(engine, fromReference, options.cwd);
  return {
    specFiles,
    diagnostics,
    errors: diagnostics.filter((diagnostic) => diagnostic.severity === 'error').length,
    warnings: diagnostics.filter((diagnostic) => diagnostic.severity === 'warning').length,
    openQuestions: parsed.flatMap(collectOpenQuestions),
    reference,
  };
}

function notRun(files: number): ReferenceStatus {
  return {
    status: 'not_available',
    reason: files === 0 ? 'no spec files' : 'the reference CLI was turned off',
  };
}

async function referenceDiagnostics(
  specFiles: readonly string[],
  options: CheckStructureOptions,
): Promise<{ reference: ReferenceStatus; diagnostics: readonly Diagnostic[] }> {
  const cli = { cwd: options.cwd, ...(options.env === undefined ? {} : { env: options.env }) };
  // Every file in one invocation: the reference resolves `use` only inside one check set.
  const [check, analyse] = await Promise.all([
    runReferenceCheck('check', specFiles, cli),
    runReferenceCheck('analyse', specFiles, cli),
  ]);
  if (!check.available)
    return { reference: { status: 'not_available', reason: check.reason }, diagnostics: [] };
  const findings = analyse.available
    ? analyse.reports.reduce((total, report) => total + report.findings.length, 0)
    : 0;
  const issues = [
    ...check.issues,
    ...(analyse.available ? analyse.issues.map((issue) => `analyse: ${issue}`) : []),
  ];
  return {
    reference: { status: 'ran', binary: check.binary, findings, issues },
    diagnostics: check.reports.flatMap((report) => report.diagnostics),
  };
}

/** Merges engine and reference diagnostics; see {@link checkStructure} for the identity rule. */
export function mergeDiagnostics(
  engine: readonly Diagnostic[],
  reference: readonly Diagnostic[],
  cwd: string,
): SourcedDiagnostic[] {
  const merged = new Map<string, SourcedDiagnostic>();
  const add = (diagnostic: Diagnostic, source: 'engine' | 'reference') => {
    const file = relative(cwd, resolve(cwd, diagnostic.location.file)).split('\\').join('/');
    const located = { ...diagnostic, location: { ...diagnostic.location, file } };
    const key = `${file}:${String(diagnostic.location.line)}:${diagnostic.code ?? `syntax-${diagnostic.severity}`}`;
    const existing = merged.get(key);
    if (existing === undefined) {
      merged.set(key, { ...located, source });
    } else if (existing.source !== source) {
      const stricter = RANK[located.severity] > RANK[existing.severity] ? located : existing;
      merged.set(key, { ...stricter, source: 'both' });
    }
  };
  for (const diagnostic of engine) add(diagnostic, 'engine');
  for (const diagnostic of reference) add(diagnostic, 'reference');
  return [...merged.values()].sort(
    (a, b) =>
      a.location.file.localeCompare(b.location.file) ||
      a.location.line - b.location.line ||
      a.location.col - b.location.col,
  );
}

import type { ParsedSpec } from './ast.js';
import { buildModel } from './build-model.js';
import { buildPlan, type TestPlan } from './build-plan.js';
import { checkIndexedSpecs } from './check-specs.js';
import type { Diagnostic } from './diagnostic.js';
import { parseSpec } from './parse-spec.js';
import { indexSpec, type SpecIndex } from './spec-index.js';
import { canonicalJson } from './parity.js';
import { conflictFindings, invariantRiskFindings, processFindings } from './process-findings.js';
import { compareStrings } from './walk.js';

/** One spec file to report on: its path as the user named it (printed as `spec_file`) and its text. */
export interface ReportSource {
  readonly path: string;
  readonly text: string;
}

/** One `analyse` finding, in the reference shape (`type`, `summary`, `affected_entities` and per-type fields). */
export type Finding = Readonly<Record<string, unknown>> & { readonly type: string; readonly summary: string };

/** What the reference `check` / `analyse` prints for one file. */
export interface FileReport {
  readonly command: 'check' | 'analyse';
  readonly spec_file: string;
  readonly diagnostics: readonly Diagnostic[];
  readonly findings: readonly Finding[];
}

/** Reports plus the exit code the reference gives for them. */
export interface Reports<T> {
  readonly reports: readonly T[];
  readonly exitCode: 0 | 1;
}

/**
 * `check` or `analyse` over a check set, one report per file in input order. `check` exits 1 when any file has an
 * error or a warning (infos do not count); `analyse` exits 1 only when some file has a finding.
 */
export function checkReports(
  sources: readonly ReportSource[],
  command: 'check' | 'analyse',
): Reports<FileReport> {
  const indexes = sources.map((source) => indexSpec(parseSpec(source.text, source.path)));
  const files = checkIndexedSpecs(indexes);
  // Keys in the printed (sorted) order: see inKeyOrder.
  const reports = files.map((file, i) => ({
    command,
    diagnostics: inReferenceOrder(file.diagnostics.map(inKeyOrder)),
    findings: command === 'analyse' ? analyseFindings(indexes[i] as SpecIndex) : [],
    spec_file: file.file,
  }));
  const failed =
    command === 'check'
      ? reports.some((r) => r.diagnostics.some((d) => d.severity !== 'info'))
      : reports.some((r) => r.findings.length > 0);
  return { reports, exitCode: failed ? 1 : 0 };
}

/** `model` of one file: the domain model with the parse diagnostics; exits 1 when the parse has an error. */
export function modelReport(source: ReportSource): { report: unknown; exitCode: 0 | 1 } {
  const spec = parseSpec(source.text, source.path);
  return { report: buildModel(spec), exitCode: parseExit(spec) };
}

/** `plan` of one file: its test obligations with the parse diagnostics; exits 1 when the parse has an error. */
export function planReport(source: ReportSource): { report: TestPlan; exitCode: 0 | 1 } {
  const spec = parseSpec(source.text, source.path);
  return { report: buildPlan(spec), exitCode: parseExit(spec) };
}

/**
 * Lists whose every object is known to have its keys in sorted order, as built: {@link sortKeys} returns them
 * without looking inside (thousands of diagnostics in a big report). Only lists of {@link inKeyOrder} copies go in.
 */
const KEYS_IN_ORDER = new WeakSet<readonly unknown[]>();

function inReferenceOrder<T>(list: T[]): T[] {
  KEYS_IN_ORDER.add(list);
  return list;
}

/**
 * A diagnostic with its keys (and its location's) in the sorted order the reference prints: {@link referenceJson}
 * then serialises it as it is instead of copying it to sort its keys, and thousands of diagnostics are one
 * fixed-shape copy here.
 */
function inKeyOrder(d: Diagnostic): Diagnostic {
  const { col, file, line } = d.location;
  return { code: d.code, location: { col, file, line }, message: d.message, severity: d.severity };
}

function parseExit(spec: ParsedSpec): 0 | 1 {
  return spec.diagnostics.some((d) => d.severity === 'error') ? 1 : 0;
}

/**
 * The `analyse` findings of one file — `dead_transition`, `missing_producer`, `deadlock`, `unreachable_trigger`,
 * `conflict` and `invariant_risk` (as the reference, only in files with an entity status enum) — sorted by type,
 * summary, then the whole finding.
 */
export function analyseFindings(index: SpecIndex): Finding[] {
  return [...processFindings(index), ...conflictFindings(index), ...invariantRiskFindings(index)].sort(
    (a, b) =>
      compareStrings(a.type, b.type) ||
      compareStrings(a.summary, b.summary) ||
      compareStrings(canonicalJson(a), canonicalJson(b)),
  );
}

/** Pretty JSON with every object's keys sorted, as the reference (serde_json) prints it. */
export function referenceJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2);
}

/** `value` with every object's keys sorted; lists of {@link KEYS_IN_ORDER} are taken as they are. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return KEYS_IN_ORDER.has(value) ? value : value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort(compareStrings)) {
    if (record[key] !== undefined) sorted[key] = sortKeys(record[key]);
  }
  return sorted;
}

import type { BlockItem, Expr, ParsedSpec } from './ast.js';
import { buildModel } from './build-model.js';
import { checkIndexedSpecs } from './check-specs.js';
import type { Diagnostic } from './diagnostic.js';
import { parseSpec } from './parse-spec.js';
import { indexSpec, type SpecIndex } from './spec-index.js';
import { emittedTriggers, providedTriggers, triggerRefs } from './triggers.js';
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
  const reports = files.map((file, i) => ({
    command,
    spec_file: file.file,
    diagnostics: file.diagnostics,
    findings: command === 'analyse' ? analyseFindings(indexes[i] as SpecIndex) : [],
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

function parseExit(spec: ParsedSpec): 0 | 1 {
  return spec.diagnostics.some((d) => d.severity === 'error') ? 1 : 0;
}

/**
 * The process findings of one file that this package computes: `unreachable_trigger` (a trigger some rule
 * listens for that no surface of the file provides and no rule emits; judged, as by the reference, only in files
 * with at least one entity status enum). Sorted by type, summary, then the whole finding.
 */
export function analyseFindings(index: SpecIndex): Finding[] {
  const statusEntities = new Set<string>();
  for (const entity of index.entities) {
    if (entity.block !== 'entity') continue;
    for (const item of entity.items) {
      if (item.kind !== 'field' || item.when || item.params || item.path || item.name.name !== 'status')
        continue;
      const values = pipeNames(item.value);
      if (values.length >= 2 && !values.some((v) => /^[A-Z]/.test(v))) statusEntities.add(entity.name.name);
    }
  }
  if (statusEntities.size === 0) return [];
  const reachable = new Set([...providedTriggers(index), ...emittedTriggers(index)]);
  const surfaces = index.surfaces.map((surface) => surface.name.name);
  const byTrigger = new Map<string, { rules: string[]; entities: Set<string> }>();
  for (const rule of index.rules) {
    const entities = bindingEntities(rule.items, statusEntities);
    for (const clause of rule.items) {
      if (clause.kind !== 'clause' || clause.keyword !== 'when') continue;
      for (const ref of triggerRefs(clause.value)) {
        if (ref.qualified || reachable.has(ref.name)) continue;
        const entry = byTrigger.get(ref.name) ?? { rules: [], entities: new Set<string>() };
        entry.rules.push(rule.name.name);
        for (const entity of entities) entry.entities.add(entity);
        byTrigger.set(ref.name, entry);
      }
    }
  }
  const findings: Finding[] = [...byTrigger].map(([trigger, entry]) => ({
    type: 'unreachable_trigger',
    summary: `Trigger '${trigger}' is not provided by any surface`,
    trigger,
    listening_rules: entry.rules,
    surfaces_checked: surfaces,
    affected_entities: [...entry.entities].sort(compareStrings),
  }));
  return findings.sort(
    (a, b) =>
      compareStrings(a.type, b.type) ||
      compareStrings(a.summary, b.summary) ||
      compareStrings(JSON.stringify(a), JSON.stringify(b)),
  );
}

function pipeNames(value: Expr): string[] {
  if (value.kind === 'binary' && value.op === '|') return value.kids.flatMap(pipeNames);
  return value.kind === 'ident' && value.name !== undefined ? [value.name] : [];
}

/** Entities a rule's `when:` binds (`x: E.f …`, `E(x)`), among those with a status enum. */
function bindingEntities(items: readonly BlockItem[], statusEntities: ReadonlySet<string>): Set<string> {
  const found = new Set<string>();
  const visit = (value: Expr): void => {
    if (value.kind === 'binding') {
      let inner = value.kids[0];
      if (inner?.kind === 'binary' && (inner.op === 'becomes' || inner.op === 'transitions_to'))
        inner = inner.kids[0];
      const object = inner?.kind === 'member' ? inner.kids[0] : undefined;
      if (object?.kind === 'ident' && object.name !== undefined && statusEntities.has(object.name))
        found.add(object.name);
    } else if (value.kind === 'call' && value.kids[0]?.kind === 'ident') {
      const callee = value.kids[0].name ?? '';
      if (statusEntities.has(callee) && value.kids.slice(1).some((arg) => arg.kind === 'ident'))
        found.add(callee);
    } else if (value.kind === 'binary' && ['and', 'or', 'implies'].includes(value.op ?? ''))
      value.kids.forEach(visit);
  };
  for (const item of items) if (item.kind === 'clause' && item.keyword === 'when') visit(item.value);
  return found;
}

/** Pretty JSON with every object's keys sorted, as the reference (serde_json) prints it. */
export function referenceJson(value: unknown): string {
  return JSON.stringify(sortKeys(value), null, 2);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort(compareStrings)) {
    if (record[key] !== undefined) sorted[key] = sortKeys(record[key]);
  }
  return sorted;
}

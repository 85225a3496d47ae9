import type { ParsedSpec } from './ast.js';
import { buildModel } from './build-model.js';
import { buildPlan, type TestPlan } from './build-plan.js';
import { normalisePath, type UseLocator } from './check-declarations.js';
import { checkIndexedSpecs } from './check-specs.js';
import { ALONE, type CheckSetContext } from './imports.js';
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
  /**
   * Which file it is, whatever it was named (the CLI gives its real path): files of one key are one file of the check
   * set, which `use` paths resolve to (relative to the key of the file that names them). Default: `path`.
   */
  readonly key?: string;
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
  locate?: UseLocator,
): Reports<FileReport> {
  // A file named more than once (`a.allium a.allium`, `specs specs/a.allium`, `./a.allium /abs/a.allium`) is one
  // file of the check set, checked once and reported once per naming, under that name, as the reference reports it.
  const firstOf = new Map<string, number>();
  const distinct: ReportSource[] = [];
  const names: string[][] = [];
  const which = sources.map((source) => {
    const key = normalisePath(source.key ?? source.path);
    let at = firstOf.get(key);
    if (at === undefined) {
      at = distinct.length;
      firstOf.set(key, at);
      distinct.push(source);
      names.push([]);
    }
    (names[at] as string[]).push(source.path);
    return at;
  });
  // Where its `use` paths lead can depend on the name (a locator resolves them from the name's folder). The reference
  // works out a file's own imports once per name, each overwriting the last, while what every name imports counts for
  // the files it names: so the file is checked under its last name, and each other name from another folder imports
  // alongside it (otherNamings) without a report of its own.
  // Every file has at least the name it was first given.
  const lastName = (i: number): string => (names[i] as string[]).at(-1) as string;
  const parsed = distinct.map((source, i) => parseSpec(source.text, lastName(i)));
  const indexes = parsed.map(indexSpec);
  const otherNamings = new Map<SpecIndex, SpecIndex>();
  if (locate !== undefined)
    names.forEach((all, i) => {
      const folders = new Set([folderOf(lastName(i))]);
      for (const name of all) {
        if (folders.has(folderOf(name))) continue;
        folders.add(folderOf(name));
        otherNamings.set(indexSpec({ ...(parsed[i] as ParsedSpec), file: name }), indexes[i] as SpecIndex);
      }
    });
  const files = checkIndexedSpecs(
    indexes,
    distinct.map((source) => source.key ?? source.path),
    locate,
    otherNamings,
  );
  const checked = files.map((file, i) => ({
    command,
    diagnostics: diagnosticList(file.diagnostics),
    findings: command === 'analyse' ? analyseFindings(indexes[i] as SpecIndex, file.context) : [],
    spec_file: file.file,
  }));
  const reports = sources.map((source, i) => {
    const report = checked[which[i] as number] as FileReport;
    return source.path === report.spec_file ? report : renamed(report, source.path);
  });
  const failed =
    command === 'check'
      ? reports.some((r) => r.diagnostics.some((d) => d.severity !== 'info'))
      : reports.some((r) => r.findings.length > 0);
  return { reports, exitCode: failed ? 1 : 0 };
}

/** The folder part of a file's name, with its slash (`''` for a name without one). */
function folderOf(name: string): string {
  return name.slice(0, name.lastIndexOf('/') + 1);
}

/** `report` under another name of its file: `spec_file` and every diagnostic's file (all of them the file's own). */
function renamed(report: FileReport, name: string): FileReport {
  return {
    ...report,
    diagnostics: diagnosticList(
      report.diagnostics.map((d) => ({ ...d, location: { ...d.location, file: name } })),
    ),
    spec_file: name,
  };
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
 * Lists known to hold only diagnostics (thousands in a big report): `writeReferenceJson` prints each batch of them
 * from {@link inKeyOrder} copies, made as it goes (a few kilobytes at a time, never all of them at once), without
 * looking inside for keys to sort.
 */
const DIAGNOSTIC_LISTS = new WeakSet<readonly unknown[]>();

function diagnosticList(list: readonly Diagnostic[]): readonly Diagnostic[] {
  DIAGNOSTIC_LISTS.add(list);
  return list;
}

/** A diagnostic with its keys (and its location's) in the sorted order the reference prints. */
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
 * summary, then the whole finding. `context` is what its check set gives it (nothing, checked alone).
 */
export function analyseFindings(index: SpecIndex, context: CheckSetContext = ALONE): Finding[] {
  return [
    ...processFindings(index, context),
    ...conflictFindings(index, context),
    ...invariantRiskFindings(index),
  ].sort(
    (a, b) =>
      compareStrings(a.type, b.type) ||
      compareStrings(a.summary, b.summary) ||
      compareStrings(canonicalJson(a), canonicalJson(b)),
  );
}

/** Pretty JSON with every object's keys sorted, as the reference (serde_json) prints it. */
export function referenceJson(value: unknown): string {
  const pieces: string[] = [];
  writeReferenceJson(value, (piece) => pieces.push(piece), Number.POSITIVE_INFINITY);
  return pieces.join('');
}

/**
 * {@link referenceJson}'s text handed to `write` in pieces of about `pieceSize` characters, each ending at a line
 * break (the last at the end of the text, no line break added): a big report (2 MB at 50k lines) is never one string
 * nor a sorted copy of itself. The text equals `JSON.stringify(value, null, 2)` with every object's keys sorted:
 * `toJSON` is called, `undefined`, functions and symbols are left out of objects and `null` in lists, and a
 * bigint or a cycle throws as it does there. Keys that look like list indexes sort as text too (`"10"` before `"9"`,
 * as serde_json's maps), which no object JavaScript builds can hold in that order.
 */
export function writeReferenceJson(
  value: unknown,
  write: (piece: string) => void,
  pieceSize = 64 * 1024,
): void {
  const writer = new JsonWriter(write, pieceSize);
  if (!writer.value(value, '', '')) throw new TypeError(`${typeof value} has no JSON text`);
  writer.flush(true);
}

class JsonWriter {
  private text = '';
  private readonly open = new Set<object>();
  private readonly seenKeys: [readonly string[], readonly string[]][] = [];

  constructor(
    private readonly write: (piece: string) => void,
    private readonly pieceSize: number,
  ) {}

  /** Appends `value` (whose line starts with `indent`); false when it prints nothing (undefined, a function). */
  value(raw: unknown, key: string | number, indent: string): boolean {
    const value = jsonValue(raw, key);
    if (value === null || typeof value !== 'object') {
      if (value === undefined || typeof value === 'function' || typeof value === 'symbol') return false;
      this.text += JSON.stringify(value);
      return true;
    }
    if (this.open.has(value)) throw new TypeError('Converting circular structure to JSON');
    this.open.add(value);
    if (Array.isArray(value)) this.list(value, indent);
    else this.object(value as Record<string, unknown>, indent);
    this.open.delete(value);
    return true;
  }

  /**
   * A list, its elements printed in batches by JSON.stringify (native, several times faster than {@link value}) from
   * copies with their keys sorted, each batch about a sixteenth of a piece long and indented to its depth. An object
   * with keys that look like list indexes keeps them in numeric order in any copy, so a batch holding one is printed
   * element by element by {@link value} instead.
   */
  private list(list: readonly unknown[], indent: string): void {
    if (list.length === 0) {
      this.text += '[]';
      return;
    }
    this.text += '[\n';
    let batch = 1;
    for (let from = 0; from < list.length;) {
      const to = Math.min(list.length, from + batch);
      const before = this.text.length;
      if (from > 0) this.text += ',\n';
      let copies: unknown[] | undefined = [];
      try {
        if (DIAGNOSTIC_LISTS.has(list)) copies = (list.slice(from, to) as Diagnostic[]).map(inKeyOrder);
        else for (let i = from; i < to; i += 1) copies.push(this.sorted(list[i], i));
      } catch (error) {
        if (error !== INDEX_KEYS) throw error;
        copies = undefined;
      }
      if (copies === undefined) {
        const inner = `${indent}  `;
        for (let i = from; i < to; i += 1) {
          this.text += `${i === from ? '' : ',\n'}${inner}`;
          if (!this.value(list[i], i, inner)) this.text += 'null';
        }
      } else {
        // Wrapped in as many lists as the list is deep, the elements come out at its depth: the text less the
        // wrapping lists' lines (no pass over it to indent each line).
        let wrapped: unknown = copies;
        for (let depth = indent.length / 2; depth > 0; depth -= 1) wrapped = [wrapped];
        const text = JSON.stringify(wrapped, null, 2);
        const wrapping = wrappingLength(indent);
        this.text += text.slice(wrapping, text.length - wrapping);
      }
      batch = Math.max(
        1,
        Math.floor(this.pieceSize / 16 / Math.max(1, (this.text.length - before) / (to - from))),
      );
      from = to;
      this.flush(false);
    }
    this.text += `\n${indent}]`;
  }

  /**
   * `raw` after `toJSON`, every object with its keys in sorted order: copied when they are not (or when something
   * inside was copied), else as it is. Throws {@link INDEX_KEYS} (see list).
   */
  private sorted(raw: unknown, key: string | number): unknown {
    const value = jsonValue(raw, key);
    if (value === null || typeof value !== 'object') return value;
    if (this.open.has(value)) throw new TypeError('Converting circular structure to JSON');
    this.open.add(value);
    try {
      return Array.isArray(value)
        ? this.sortedList(value)
        : this.sortedObject(value as Record<string, unknown>);
    } finally {
      this.open.delete(value);
    }
  }

  private sortedList(list: readonly unknown[]): readonly unknown[] {
    let copy: unknown[] | undefined;
    for (let i = 0; i < list.length; i += 1) {
      const item = list[i];
      const out = this.sorted(item, i);
      if (copy === undefined && out !== item) copy = list.slice(0, i);
      copy?.push(out);
    }
    return copy ?? list;
  }

  private sortedObject(record: Record<string, unknown>): Record<string, unknown> {
    const keys = Object.keys(record);
    // Index-like keys come first in Object.keys, so looking at the first finds any.
    if (keys.length > 0 && isIndexKey(keys[0] as string)) throw INDEX_KEYS;
    const ordered = inOrder(keys);
    const order = ordered ? keys : this.sortedKeys(keys);
    let copy: Record<string, unknown> | undefined = ordered ? undefined : {};
    for (let i = 0; i < order.length; i += 1) {
      const k = order[i] as string;
      const item = record[k];
      const out = this.sorted(item, k);
      if (copy === undefined) {
        if (out === item) continue;
        copy = {};
        for (let j = 0; j < i; j += 1) setOwn(copy, order[j] as string, record[order[j] as string]);
      }
      setOwn(copy, k, out);
    }
    return copy ?? record;
  }

  /**
   * `keys` sorted: the objects of a report come in a few shapes (a diagnostic, its location), so the last few key
   * lists seen and their sorted order are kept, and a list equal to one of them is not sorted again.
   */
  private sortedKeys(keys: string[]): readonly string[] {
    for (const [seen, sorted] of this.seenKeys) if (sameList(seen, keys)) return sorted;
    const sorted = [...keys].sort(compareStrings);
    if (this.seenKeys.length === 8) this.seenKeys.shift();
    this.seenKeys.push([keys, sorted]);
    return sorted;
  }

  private object(record: Record<string, unknown>, indent: string): void {
    const keys = Object.keys(record);
    const inner = `${indent}  `;
    let first = true;
    for (const key of inOrder(keys) ? keys : this.sortedKeys(keys)) {
      const before = this.text.length;
      this.text += `${first ? '{' : ','}\n${inner}${JSON.stringify(key)}: `;
      if (this.value(record[key], key, inner)) first = false;
      else this.text = this.text.slice(0, before);
    }
    this.text += first ? '{}' : `\n${indent}}`;
  }

  /** Hands over the text up to its last line break once it has {@link pieceSize} characters (all of it at the end). */
  flush(atEnd: boolean): void {
    if (atEnd) {
      if (this.text !== '') this.write(this.text);
      this.text = '';
      return;
    }
    if (this.text.length < this.pieceSize) return;
    const cut = this.text.lastIndexOf('\n') + 1;
    if (cut === 0) return;
    this.write(this.text.slice(0, cut));
    this.text = this.text.slice(cut);
  }
}

/**
 * The length of the lines that open lists nested down to `indent` (`[`, `  [`, …, each with its line break), which
 * is also that of the lines that close them (each after a line break).
 */
function wrappingLength(indent: string): number {
  const depth = indent.length / 2;
  return (depth + 1) * 2 + depth * (depth + 1);
}

/** What JSON.stringify prints for `raw` under `key`: the result of its `toJSON`, when it has one. */
function jsonValue(raw: unknown, key: string | number): unknown {
  if (raw !== null && typeof raw === 'object' && typeof (raw as { toJSON?: unknown }).toJSON === 'function')
    return (raw as { toJSON: (key: string) => unknown }).toJSON(String(key));
  return raw;
}

/** Adds `key` as an own property (`__proto__` too, which plain assignment would take as the prototype). */
function setOwn(record: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(record, key, { value, enumerable: true, writable: true });
  else record[key] = value;
}

/** Thrown by `JsonWriter.sorted` for an object whose keys no copy can hold in sorted order. */
const INDEX_KEYS = new Error('keys that look like list indexes');

function isIndexKey(key: string): boolean {
  const c = key.charCodeAt(0);
  return c >= 48 && c <= 57 && /^(0|[1-9][0-9]*)$/.test(key);
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

function inOrder(keys: readonly string[]): boolean {
  for (let i = 1; i < keys.length; i += 1)
    if (compareStrings(keys[i - 1] as string, keys[i] as string) > 0) return false;
  return true;
}

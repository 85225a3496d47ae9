import type { Diagnostic } from './diagnostic.js';
import { compareStrings } from './walk.js';

/** What one implementation printed for one spec file, per command (a missing command is `undefined`). */
export interface ImplementationOutput {
  readonly check?: { readonly diagnostics: readonly Diagnostic[]; readonly exitCode?: number };
  /** The whole `analyse` report: its diagnostics and its findings. */
  readonly analyse?: { readonly diagnostics: readonly Diagnostic[]; readonly findings: readonly unknown[] };
  readonly model?: unknown;
  readonly plan?: unknown;
}

/** Agreement of ours with the reference on one file. */
export interface FileParity {
  readonly file: string;
  readonly verdictAgrees: boolean;
  readonly checkEqual: boolean;
  readonly referenceErrorLines: number;
  readonly matchedErrorLines: number;
  readonly ourErrorLines: number;
  readonly analyseEqual: boolean | undefined;
  readonly modelEqual: boolean | undefined;
  readonly planEqual: boolean | undefined;
}

/** Per diagnostic code: how many (line, col) positions the reference, ours and both report. */
export interface CodeCounts {
  readonly code: string;
  readonly severity: string;
  reference: number;
  ours: number;
  both: number;
}

/** The agreement table over a folder of specs. */
export interface ParityTable {
  readonly files: readonly FileParity[];
  readonly codes: readonly CodeCounts[];
}

/** Canonical JSON (keys sorted, `undefined` dropped) for equality of reference-shaped values. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => compareStrings(a, b)),
        )
      : v,
  );
}

const equalOrUndefined = (a: unknown, b: unknown): boolean | undefined =>
  a === undefined || b === undefined ? undefined : canonicalJson(a) === canonicalJson(b);

/** Compares ours with the reference, file by file, and tallies diagnostic codes by position. */
export function compareOutputs(
  files: readonly { file: string; ours: ImplementationOutput; reference: ImplementationOutput }[],
): ParityTable {
  const codes = new Map<string, CodeCounts>();
  const count = (d: Diagnostic): CodeCounts => {
    const key = `${d.severity} ${d.code ?? 'null'}`;
    let entry = codes.get(key);
    if (entry === undefined) {
      entry = { code: d.code ?? 'null', severity: d.severity, reference: 0, ours: 0, both: 0 };
      codes.set(key, entry);
    }
    return entry;
  };
  const rows = files.map(({ file, ours, reference }) => {
    const ourDiagnostics = ours.check?.diagnostics ?? [];
    const refDiagnostics = reference.check?.diagnostics ?? [];
    const at = (d: Diagnostic): string =>
      `${d.severity} ${d.code ?? 'null'} ${d.location.line}:${d.location.col}`;
    const ourKeys = new Set(ourDiagnostics.map(at));
    for (const d of refDiagnostics) {
      const entry = count(d);
      entry.reference += 1;
      if (ourKeys.has(at(d))) entry.both += 1;
    }
    for (const d of ourDiagnostics) count(d).ours += 1;
    const errorLines = (list: readonly Diagnostic[]): Set<number> =>
      new Set(list.filter((d) => d.severity === 'error').map((d) => d.location.line));
    const ourErrors = errorLines(ourDiagnostics);
    const refErrors = errorLines(refDiagnostics);
    const fails = (list: readonly Diagnostic[]): boolean => list.some((d) => d.severity === 'error');
    return {
      file,
      verdictAgrees: fails(ourDiagnostics) === fails(refDiagnostics),
      checkEqual: canonicalJson(ourDiagnostics) === canonicalJson(refDiagnostics),
      referenceErrorLines: refErrors.size,
      matchedErrorLines: [...refErrors].filter((line) => ourErrors.has(line)).length,
      ourErrorLines: ourErrors.size,
      analyseEqual: equalOrUndefined(ours.analyse, reference.analyse),
      modelEqual: equalOrUndefined(ours.model, reference.model),
      planEqual:
        reference.plan === undefined
          ? undefined
          : ours.plan === undefined
            ? false
            : equalOrUndefined(ours.plan, reference.plan),
    };
  });
  const sortedCodes = [...codes.values()].sort(
    (a, b) => compareStrings(a.severity, b.severity) || compareStrings(a.code, b.code),
  );
  return { files: rows, codes: sortedCodes };
}

const ratio = (part: number, whole: number): string => (whole === 0 ? '-' : (part / whole).toFixed(2));

/** The table as plain text: totals, per-code recall and precision, and the files that differ. */
export function formatParity(table: ParityTable): string {
  const files = table.files;
  const sum = (pick: (f: FileParity) => number): number => files.reduce((n, f) => n + pick(f), 0);
  const tally = (pick: (f: FileParity) => boolean | undefined): string => {
    const known = files.filter((f) => pick(f) !== undefined);
    return `${known.filter((f) => pick(f) === true).length}/${known.length}`;
  };
  const refLines = sum((f) => f.referenceErrorLines);
  const matched = sum((f) => f.matchedErrorLines);
  const ours = sum((f) => f.ourErrorLines);
  const lines = [
    `files: ${files.length}`,
    `verdict (error / no error) agrees: ${tally((f) => f.verdictAgrees)}`,
    `check JSON equal: ${tally((f) => f.checkEqual)}`,
    `error lines: reference ${refLines}, ours ${ours}, both ${matched} (recall ${ratio(matched, refLines)}, precision ${ratio(matched, ours)})`,
    `analyse JSON equal (diagnostics and findings): ${tally((f) => f.analyseEqual)}`,
    `model equal: ${tally((f) => f.modelEqual)}`,
    `plan equal: ${tally((f) => f.planEqual)}`,
    '',
    'severity  code                                          reference  ours  both  recall  precision',
  ];
  for (const c of table.codes) {
    lines.push(
      `${c.severity.padEnd(9)} ${c.code.padEnd(45)} ${String(c.reference).padStart(9)} ${String(c.ours).padStart(5)} ${String(c.both).padStart(5)} ${ratio(c.both, c.reference).padStart(7)} ${ratio(c.both, c.ours).padStart(10)}`,
    );
  }
  const differing = files.filter(
    (f) => !f.checkEqual || f.analyseEqual === false || f.modelEqual === false || f.planEqual === false,
  );
  if (differing.length > 0) {
    lines.push('', 'files that differ (check / analyse / model / plan):');
    const mark = (v: boolean | undefined): string => (v === undefined ? '-' : v ? 'ok' : 'DIFF');
    for (const f of differing)
      lines.push(
        `  ${f.file}: ${mark(f.checkEqual)} / ${mark(f.analyseEqual)} / ${mark(f.modelEqual)} / ${mark(f.planEqual)}`,
      );
  }
  return `${lines.join('\n')}\n`;
}

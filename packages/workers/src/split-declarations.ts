/** A top-level declaration of a spec file, with the comment lines directly above it. */
export interface SpecDeclaration {
  /** `rule`, `entity` (also for `external entity`), `surface`, `enum`, `value`, `config`, `open question`, … */
  readonly kind: string;
  /** The declared name; empty for unnamed blocks (`config`, `given`, `open question`). */
  readonly name: string;
  /** `kind:Name` for named declarations, matching the dependency graph's node ids; `kind` alone otherwise. */
  readonly id: string;
  /** 1-based first line (the first attached comment line when there is one). */
  readonly startLine: number;
  /** 1-based last line, inclusive. */
  readonly endLine: number;
  readonly text: string;
}

/** A spec file cut into its preamble (leading comments) and its top-level declarations. */
export interface SplitSpec {
  readonly preamble: string;
  readonly declarations: readonly SpecDeclaration[];
}

const HEAD =
  /^(external\s+entity|entity|value|enum|rule|surface|actor|contract|invariant|variant|given|config|default|deferred|open\s+question|use)\b\s*([A-Za-z_][\w./]*)?/;

const INDENT_OR_CLOSER = /^[\s})\]]/;

function isTopLevelStart(line: string): boolean {
  return line.length > 0 && !INDENT_OR_CLOSER.test(line) && !line.startsWith('--');
}

function describeHead(line: string): { kind: string; name: string } {
  const match = HEAD.exec(line);
  if (match === null) return { kind: 'unknown', name: '' };
  const kind =
    match[1]!.replace(/\s+/g, ' ') === 'external entity' ? 'entity' : match[1]!.replace(/\s+/g, ' ');
  const named = !['config', 'given', 'open question', 'use'].includes(kind);
  let name = named ? (match[2] ?? '') : '';
  if (kind === 'default') name = /^default\s+(?:[\w/]+)\s+(\w+)/.exec(line)?.[1] ?? name;
  return { kind, name };
}

/**
 * Cuts spec text into top-level declarations by layout: a declaration starts at a non-comment line in column 0
 * and runs until the next one; comment lines directly above it belong to it. Pure text work, tolerant of
 * syntax errors (it never fails), so prompts can quote slices of a spec the parser rejects.
 */
export function splitDeclarations(text: string): SplitSpec {
  const lines = text.split('\n');
  const starts: number[] = [];
  lines.forEach((line, index) => {
    if (isTopLevelStart(line)) starts.push(index);
  });
  const withComments = starts.map((start, i) => {
    const floor = i === 0 ? 0 : starts[i - 1]! + 1;
    let from = start;
    while (from > floor && lines[from - 1]!.startsWith('--')) from -= 1;
    return from;
  });
  const preambleEnd = Math.max(withComments[0] ?? lines.length, versionHeaderEnd(lines));
  const declarations = starts.map((start, i) => {
    const from = i === 0 ? Math.max(withComments[0]!, preambleEnd) : withComments[i]!;
    const nextFrom = i + 1 < starts.length ? withComments[i + 1]! : lines.length;
    const body = trimTrailingBlank(lines.slice(from, nextFrom));
    const head = describeHead(lines[start]!);
    return {
      ...head,
      id: head.name === '' ? head.kind : `${head.kind}:${head.name}`,
      startLine: from + 1,
      endLine: from + body.length,
      text: body.join('\n'),
    };
  });
  return { preamble: trimTrailingBlank(lines.slice(0, preambleEnd)).join('\n'), declarations };
}

// The version header and the comment lines straight after it are file-level, even with no blank line below.
function versionHeaderEnd(lines: readonly string[]): number {
  if (!/^--\s*allium:/.test(lines[0] ?? '')) return 0;
  let end = 1;
  while (end < lines.length && lines[end]!.startsWith('--')) end += 1;
  return end;
}

function trimTrailingBlank(lines: readonly string[]): string[] {
  let end = lines.length;
  while (end > 0 && lines[end - 1]!.trim() === '') end -= 1;
  return lines.slice(0, end);
}

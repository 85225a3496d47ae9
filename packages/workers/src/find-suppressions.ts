/** One `-- allium-ignore` comment in a spec file. */
export interface SpecSuppression {
  readonly line: number;
  /** The codes it silences, sorted, or `all`. */
  readonly codes: readonly string[];
  /**
   * The codes and the trimmed line it stands on: stable under line shifts and under edits to the construct it
   * covers, so only a genuinely added suppression (or one more copy of an existing one) compares as new.
   */
  readonly signature: string;
}

const IGNORE = /--\s*allium-ignore\b(.*)$/;

/** Every `-- allium-ignore` suppression in a spec file's text. */
export function findSuppressions(text: string): SpecSuppression[] {
  const lines = text.split('\n');
  const found: SpecSuppression[] = [];
  lines.forEach((line, index) => {
    const match = IGNORE.exec(line);
    if (match === null) return;
    const codes = match[1]!
      .split(/[,\s]+/)
      .map((c) => c.trim())
      .filter((c) => c !== '')
      .sort();
    found.push({ line: index + 1, codes, signature: `${codes.join(',')}|${line.trim()}` });
  });
  return found;
}

/** Suppressions in `after` with no counterpart in `before` (matched by signature, as a multiset). */
export function newSuppressions(before: string, after: string): SpecSuppression[] {
  const remaining = new Map<string, number>();
  for (const s of findSuppressions(before)) remaining.set(s.signature, (remaining.get(s.signature) ?? 0) + 1);
  return findSuppressions(after).filter((s) => {
    const left = remaining.get(s.signature) ?? 0;
    if (left === 0) return true;
    remaining.set(s.signature, left - 1);
    return false;
  });
}

/**
 * Reads the score a hill-climb command printed: the last match of `pattern` in `output`, its first capture group
 * when it has one, else the whole match, as a finite number. `undefined` when nothing matches or the text is not
 * a number. Throws `SyntaxError` when `pattern` is not a valid regular expression.
 */
export function parseScore(output: string, pattern: string): number | undefined {
  const regex = new RegExp(pattern, 'gm');
  let last: RegExpExecArray | undefined;
  for (const match of output.matchAll(regex)) last = match;
  if (last === undefined) return undefined;
  const text = (last[1] ?? last[0]).trim();
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?%?$/i.test(text)) return undefined;
  const value = Number(text.replace(/%$/, ''));
  return Number.isFinite(value) ? value : undefined;
}

/** Whether `score` beats `best` in the climb's direction; any score beats having none. */
export function isImprovement(
  score: number | undefined,
  best: number | null,
  direction: 'max' | 'min',
): boolean {
  if (score === undefined) return false;
  if (best === null) return true;
  return direction === 'max' ? score > best : score < best;
}

/** Whether `score` reaches `target` in the climb's direction. */
export function reachesTarget(
  score: number | null,
  target: number | undefined,
  direction: 'max' | 'min',
): boolean {
  if (score === null || target === undefined) return false;
  return direction === 'max' ? score >= target : score <= target;
}

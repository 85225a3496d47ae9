import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import { err, ok, type Result } from '@allium-loop/errors';
import { z } from 'zod';

/** The state file of the `/al` convention (`.al-state.json`); keys other tools add are kept. */
export const AlStateSchema = z.looseObject({
  status: z.enum(['pending', 'in_progress', 'done', 'failed']),
  iteration: z.number().int().nonnegative(),
  goal: z.string(),
  progress: z
    .union([z.string(), z.array(z.string())])
    .nullable()
    .optional(),
  result: z.unknown().optional(),
  error: z.string().nullable().optional(),
});

/** A state file. */
export type AlState = z.infer<typeof AlStateSchema>;

/** The state file of a new goal. */
export function initialAlState(goal: string): AlState {
  return { status: 'pending', iteration: 0, goal, progress: '', result: null, error: null };
}

/** Parses a state file's text; issues name the key. */
export function parseAlState(text: string): Result<AlState> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return err([`not valid JSON: ${(error as Error).message}`]);
  }
  const parsed = AlStateSchema.safeParse(value);
  if (parsed.success) return ok(parsed.data);
  return err(
    parsed.error.issues.map(
      (issue) => `${issue.path.map(String).join('.') || '(top level)'}: ${issue.message}`,
    ),
  );
}

/** The state file as written: two-space JSON, a final newline. */
export function serializeAlState(state: AlState): string {
  return `${JSON.stringify(state, null, 2)}\n`;
}

const EXTENSIONS =
  'md|txt|json|jsonl|ndjson|csv|tsv|ya?ml|toml|xml|html?|css|s?css|m?[jt]sx?|cjs|py|rb|go|rs|java|kt|swift|c|h|cc|cpp|hpp|cs|php|sh|sql|log|ini|cfg|conf|svg|png|jpe?g|gif|pdf|zip|tar|gz|lock|allium';
const PATH = new RegExp(
  `(?:^|[\\s"'\`(\\[])((?:\\.{0,2}/)?(?:[\\w@.+-]+/)*[\\w@+-][\\w@.+-]*\\.(?:${EXTENSIONS}))(?=$|[\\s"'\`),;:\\]]|\\.(?:\\s|$))`,
  'gim',
);
const COUNT = /(\d[\d,]*)\s+(lines?|entries|entry|items?|rows?|records?|words?)\b/gi;

/** Files a result names: paths with a common extension in its text, and a `files` array when it has one. */
export function namedFiles(result: unknown): string[] {
  const found = new Set<string>();
  if (typeof result === 'object' && result !== null && Array.isArray((result as { files?: unknown }).files))
    for (const file of (result as { files: unknown[] }).files) if (typeof file === 'string') found.add(file);
  const text = typeof result === 'string' ? result : JSON.stringify(result ?? '');
  for (const match of text.matchAll(PATH)) if (!/:\/\//.test(match[1]!)) found.add(match[1]!);
  return [...found];
}

/** Counts a result states, e.g. `12 entries`: the number and its unit. */
export function statedCounts(result: unknown): { readonly count: number; readonly unit: string }[] {
  const text = typeof result === 'string' ? result : JSON.stringify(result ?? '');
  return [...text.matchAll(COUNT)].map((m) => ({
    count: Number(m[1]!.replaceAll(',', '')),
    unit: m[2]!.toLowerCase(),
  }));
}

/** The counts an artefact plausibly has: lines, non-empty lines, list items, table rows, JSON array length, words. */
export function artefactCounts(text: string): { readonly lines: Set<number>; readonly words: number } {
  const all = text.split('\n');
  if (all.at(-1) === '') all.pop();
  const nonEmpty = all.filter((line) => line.trim() !== '');
  const list = nonEmpty.filter((line) => /^\s*(?:[-*+]|\d+[.)])\s+/.test(line));
  const table = nonEmpty.filter(
    (line) => line.trim().startsWith('|') && !/^\|[\s:|-]+\|?$/.test(line.trim()),
  );
  const lines = new Set([
    all.length,
    nonEmpty.length,
    list.length,
    Math.max(0, table.length - 1),
    Math.max(0, nonEmpty.length - 1),
  ]);
  try {
    const json: unknown = JSON.parse(text);
    if (Array.isArray(json)) lines.add(json.length);
    else if (typeof json === 'object' && json !== null)
      for (const value of Object.values(json)) if (Array.isArray(value)) lines.add(value.length);
  } catch {
    // Not JSON: the line-based counts stand.
  }
  return { lines, words: text.split(/\s+/).filter((w) => w !== '').length };
}

/**
 * Checks a `done` claim against the artefacts, ignoring the agent's prose: the result must be present; every file
 * it names must exist inside the project and be non-empty; counts it states (`12 entries`, `40 lines`) are
 * spot-checked against the first named file. Returns the reason it fails, or `undefined` when it holds.
 */
export async function checkDoneClaim(result: unknown, cwd: string): Promise<string | undefined> {
  if (result === undefined || result === null || (typeof result === 'string' && result.trim() === ''))
    return 'status is done but result is empty';
  const files = namedFiles(result);
  for (const file of files) {
    const path = isAbsolute(file) ? file : join(cwd, file);
    if (relative(cwd, path).startsWith('..')) return `result names ${file}, outside the project`;
    const info = await stat(path).catch(() => undefined);
    if (info === undefined) return `result names ${file}, which does not exist`;
    if (info.isFile() && info.size === 0) return `result names ${file}, which is empty`;
  }
  const first = files[0];
  if (first === undefined) return undefined;
  const text = await readFile(isAbsolute(first) ? first : join(cwd, first), 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const counts = artefactCounts(text);
  for (const claim of statedCounts(result)) {
    const holds = claim.unit.startsWith('word')
      ? claim.count === counts.words
      : counts.lines.has(claim.count);
    if (!holds)
      return `result says ${String(claim.count)} ${claim.unit}, but ${first} does not have that many (${[...counts.lines].sort((a, b) => a - b).join('/')} by line, list item or row)`;
  }
  return undefined;
}

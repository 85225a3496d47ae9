import { createHash } from 'node:crypto';
import { z } from 'zod';

/** Which part of a file an entry covers: all of it, one JSON key path, or one INI/TOML section. */
export type HarnessPart =
  | { readonly kind: 'file' }
  | { readonly kind: 'json'; readonly key: readonly string[] }
  | { readonly kind: 'section'; readonly header: string };

/** One thing the test or verify command runs or reads that is not the code under work, and its hash. */
export interface HarnessEntry {
  /** What it is, e.g. `package.json scripts.test`, `pyproject.toml [tool.pytest.ini_options]`, `check.sh`. */
  readonly label: string;
  /** Project-relative path of the file that holds it. */
  readonly path: string;
  readonly part: HarnessPart;
  /** SHA-256 of the part's text; `null` when it did not exist (creating it later is a change too). */
  readonly sha256: string | null;
  /** Why it is in the harness, e.g. `run by npm test`, `found through PATH entry ./bin`. */
  readonly why: string;
}

/**
 * The engine's fingerprint of what it runs, taken at the start of a run: the commands, every harness entry, and
 * the text of every file an entry covers (to restore it). `allowTestChanges` is the user's list of test paths
 * (or globs) whose weakening the guards allow, read from `allium-loop.yaml` at the same moment.
 */
export interface HarnessRecord {
  readonly version: 1;
  readonly commands: readonly string[];
  readonly entries: readonly HarnessEntry[];
  readonly files: Readonly<Record<string, string | null>>;
  readonly allowTestChanges: readonly string[];
}

/** The zod schema of a stored {@link HarnessRecord}. */
export const HarnessRecordSchema = z.object({
  version: z.literal(1),
  commands: z.array(z.string()),
  entries: z.array(
    z.object({
      label: z.string(),
      path: z.string(),
      part: z.union([
        z.object({ kind: z.literal('file') }),
        z.object({ kind: z.literal('json'), key: z.array(z.string()) }),
        z.object({ kind: z.literal('section'), header: z.string() }),
      ]),
      sha256: z.string().nullable(),
      why: z.string(),
    }),
  ),
  files: z.record(z.string(), z.string().nullable()),
  allowTestChanges: z.array(z.string()),
});

/** SHA-256 of a text, hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

function jsonValue(text: string, key: readonly string[]): string | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Unparseable JSON: the whole text stands for every key, so any change to it shows.
    return `unparseable:${text}`;
  }
  for (const name of key) {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, name)) return null;
    value = (value as Record<string, unknown>)[name];
  }
  return value === undefined ? null : JSON.stringify(value);
}

interface SectionBlock {
  readonly start: number;
  readonly end: number;
}

function sectionBlocks(lines: readonly string[], header: string): SectionBlock[] {
  const blocks: SectionBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    if (lines[i]!.trim() !== `[${header}]`) continue;
    let end = i + 1;
    while (end < lines.length && !/^\s*\[/.test(lines[end]!)) end += 1;
    blocks.push({ start: i, end });
    i = end - 1;
  }
  return blocks;
}

function sectionText(text: string, header: string): string | null {
  const lines = text.split('\n');
  const blocks = sectionBlocks(lines, header);
  if (blocks.length === 0) return null;
  return blocks.map((b) => lines.slice(b.start, b.end).join('\n').trimEnd()).join('\n');
}

/** The text of one part of a file (`null` when the file or the part is absent). */
export function partText(text: string | null, part: HarnessPart): string | null {
  if (text === null) return null;
  if (part.kind === 'file') return text;
  if (part.kind === 'json') return jsonValue(text, part.key);
  return sectionText(text, part.header);
}

/** The hash of one part of a file, `null` when absent. */
export function partHash(text: string | null, part: HarnessPart): string | null {
  const value = partText(text, part);
  return value === null ? null : sha256Hex(value);
}

/** Recorded entries whose part now hashes differently (changed, created or deleted). Pure. */
export function changedHarness(
  record: HarnessRecord,
  current: ReadonlyMap<string, string | null>,
): HarnessEntry[] {
  return record.entries.filter(
    (entry) => partHash(current.get(entry.path) ?? null, entry.part) !== entry.sha256,
  );
}

function setJsonKey(text: string, recorded: string | null, key: readonly string[]): string | undefined {
  let current: unknown;
  try {
    current = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof current !== 'object' || current === null) return undefined;
  const old = recorded === null ? undefined : (JSON.parse(recorded) as { value: unknown } | undefined);
  let holder = current as Record<string, unknown>;
  for (const name of key.slice(0, -1)) {
    const next = holder[name];
    if (typeof next !== 'object' || next === null) {
      if (old === undefined) return text;
      holder[name] = {};
    }
    holder = holder[name] as Record<string, unknown>;
  }
  const last = key.at(-1)!;
  if (old === undefined) delete holder[last];
  else holder[last] = old.value;
  const indent = /\n([ \t]+)"/.exec(text)?.[1] ?? '  ';
  return `${JSON.stringify(current, null, indent)}${text.endsWith('\n') ? '\n' : ''}`;
}

function spliceSection(text: string, recorded: string | null, header: string): string {
  const lines = text.split('\n');
  const blocks = sectionBlocks(lines, header);
  const kept: string[] = [];
  let insertAt = -1;
  let cursor = 0;
  for (const block of blocks) {
    kept.push(...lines.slice(cursor, block.start));
    if (insertAt < 0) insertAt = kept.length;
    cursor = block.end;
  }
  kept.push(...lines.slice(cursor));
  if (recorded === null) return kept.join('\n');
  const restored = recorded.split('\n');
  if (insertAt < 0) return `${kept.join('\n').trimEnd()}\n\n${recorded}\n`;
  kept.splice(insertAt, 0, ...restored, '');
  return kept.join('\n');
}

/**
 * How to undo changes to harness entries: for each file, the text to write back (`null`: delete it, it did not
 * exist). A whole-file entry restores the recorded text; a JSON key or a section is put back into the file as it
 * is now, so unrelated edits (a dependency added to `package.json`) survive. Pure.
 */
export function planHarnessRestore(
  record: HarnessRecord,
  changed: readonly HarnessEntry[],
  current: ReadonlyMap<string, string | null>,
): { readonly path: string; readonly text: string | null }[] {
  const byPath = new Map<string, HarnessEntry[]>();
  for (const entry of changed) byPath.set(entry.path, [...(byPath.get(entry.path) ?? []), entry]);
  const plan: { path: string; text: string | null }[] = [];
  for (const [path, entries] of byPath) {
    const original = record.files[path] ?? null;
    let text = current.get(path) ?? null;
    if (text === null || original === null || entries.some((e) => e.part.kind === 'file')) {
      plan.push({ path, text: original });
      continue;
    }
    for (const entry of entries) {
      if (text === undefined) break;
      const part = entry.part;
      if (part.kind === 'json') {
        const value = jsonValue(original, part.key);
        if (value?.startsWith('unparseable:') === true) {
          text = original;
          continue;
        }
        const wrapped = value === null ? null : JSON.stringify({ value: JSON.parse(value) as unknown });
        text = setJsonKey(text, wrapped, part.key) ?? original;
      } else if (part.kind === 'section') {
        text = spliceSection(text, sectionText(original, part.header), part.header);
      }
    }
    plan.push({ path, text });
  }
  return plan;
}

/** One line per changed entry, for journals and reports: `package.json scripts.test (run by npm test)`. */
export function describeHarnessChange(entry: HarnessEntry): string {
  return `${entry.label} (${entry.why})`;
}

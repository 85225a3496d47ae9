import { readdir, readFile, realpath, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '@allium-loop/ledger';
import { HarnessRecordSchema, sha256Hex, type HarnessRecord } from './harness-record.js';

/** A harness record as kept outside the project, with the run it belongs to. */
export interface StoredHarnessRecord {
  readonly slug: string;
  readonly cwd: string;
  readonly savedAt: string;
  readonly record: HarnessRecord;
}

/**
 * The folder outside every project where harness records are kept: `$XDG_STATE_HOME/allium-loop/harness`, else
 * `$HOME/.local/state/allium-loop/harness`. `undefined` when neither variable is set. Agent CLIs sandbox their
 * writes to the project (and temp); this folder is out of their reach, unlike `.allium-loop/`.
 */
export function harnessStoreDir(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const state = env['XDG_STATE_HOME'];
  if (state !== undefined && state !== '') return join(state, 'allium-loop', 'harness');
  const home = env['HOME'];
  return home === undefined || home === ''
    ? undefined
    : join(home, '.local', 'state', 'allium-loop', 'harness');
}

async function projectDir(
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<string | undefined> {
  const store = harnessStoreDir(env);
  if (store === undefined) return undefined;
  const real = await realpath(cwd).catch(() => resolve(cwd));
  return join(store, sha256Hex(real).slice(0, 24));
}

/**
 * Saves a run's harness record outside the project (atomically). Returns the file written, or `undefined` when
 * there is no state folder (no `HOME`/`XDG_STATE_HOME`); the ledger's copy then stands alone.
 */
export async function saveHarnessRecord(
  cwd: string,
  slug: string,
  record: HarnessRecord,
  env: Readonly<Record<string, string | undefined>>,
  now: Date = new Date(),
): Promise<string | undefined> {
  const dir = await projectDir(cwd, env);
  if (dir === undefined) return undefined;
  const file = join(dir, `${slug}.json`);
  const stored: StoredHarnessRecord = { slug, cwd: resolve(cwd), savedAt: now.toISOString(), record };
  await writeFileAtomic(file, `${JSON.stringify(stored, null, 2)}\n`);
  return file;
}

function parseStored(text: string): StoredHarnessRecord | undefined {
  try {
    const json = JSON.parse(text) as Record<string, unknown>;
    const record = HarnessRecordSchema.safeParse(json['record']);
    if (!record.success || typeof json['slug'] !== 'string' || typeof json['savedAt'] !== 'string')
      return undefined;
    return {
      slug: json['slug'],
      cwd: String(json['cwd']),
      savedAt: json['savedAt'],
      record: record.data as HarnessRecord,
    };
  } catch {
    return undefined;
  }
}

/** The record saved outside the project for this run, or `undefined` (none, or unreadable). */
export async function loadHarnessRecord(
  cwd: string,
  slug: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<StoredHarnessRecord | undefined> {
  const dir = await projectDir(cwd, env);
  if (dir === undefined) return undefined;
  const text = await readFile(join(dir, `${slug}.json`), 'utf8').catch(() => undefined);
  return text === undefined ? undefined : parseStored(text);
}

/** The most recently saved record of any run in this project, or `undefined`. */
export async function latestHarnessRecord(
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<StoredHarnessRecord | undefined> {
  const dir = await projectDir(cwd, env);
  if (dir === undefined) return undefined;
  let latest: { stored: StoredHarnessRecord; mtime: number } | undefined;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith('.json')) continue;
    const file = join(dir, name);
    const stored = parseStored(await readFile(file, 'utf8').catch(() => ''));
    const mtime = (await stat(file).catch(() => undefined))?.mtimeMs ?? 0;
    if (stored !== undefined && (latest === undefined || mtime > latest.mtime)) latest = { stored, mtime };
  }
  return latest?.stored;
}

/** Parses a record kept in a ledger (`modeState.harness`); `undefined` when absent or malformed. */
export function parseHarnessRecord(value: unknown): HarnessRecord | undefined {
  const parsed = HarnessRecordSchema.safeParse(value);
  return parsed.success ? (parsed.data as HarnessRecord) : undefined;
}

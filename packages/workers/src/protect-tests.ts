import { copyFile, mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { ProtectedTest } from './detect-violations.js';
import { sha256 } from './take-snapshot.js';

/** Where the engine keeps its copies of generated tests for a run, relative to `.allium-loop/`. */
export function protectedStoreDir(slug: string): string {
  return `${slug}/protected`;
}

/**
 * Records generated tests after a successful propagate: copies each file into the engine's store and returns
 * its hash, to be kept in the ledger. Later phases may not change these files; the guards restore them from
 * the copy. Rejects when a listed file cannot be read (propagate's claims were verified just before).
 */
export async function recordProtectedTests(
  cwd: string,
  slug: string,
  paths: readonly string[],
  tick: number,
): Promise<ProtectedTest[]> {
  const records: ProtectedTest[] = [];
  for (const path of paths) {
    const text = await readFile(join(cwd, path), 'utf8');
    // The `.orig` suffix keeps test runners that scan the tree (`node --test`, vitest, pytest) off the copy.
    const storedCopy = `${protectedStoreDir(slug)}/${path}.orig`;
    const target = join(cwd, '.allium-loop', storedCopy);
    await mkdir(dirname(target), { recursive: true });
    await copyFile(join(cwd, path), target);
    records.push({ path, sha256: sha256(text), storedCopy, recordedAtTick: tick });
  }
  return records;
}

/** Merges new records over old ones by path (a re-propagated test replaces its earlier record). */
export function mergeProtectedTests(
  previous: readonly ProtectedTest[],
  next: readonly ProtectedTest[],
): ProtectedTest[] {
  const byPath = new Map(previous.map((t) => [t.path, t]));
  for (const t of next) byPath.set(t.path, t);
  return [...byPath.values()].sort((a, b) => a.path.localeCompare(b.path));
}

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@allium-loop/ledger';
import { readHarnessFiles } from './fingerprint-harness.js';
import {
  changedHarness,
  planHarnessRestore,
  type HarnessEntry,
  type HarnessRecord,
} from './harness-record.js';

/** What changed in the harness since it was recorded, and how to put it back. */
export interface HarnessCheck {
  readonly changed: readonly HarnessEntry[];
  /** Per file, the text to write back (`null`: delete the file). */
  readonly restore: readonly { readonly path: string; readonly text: string | null }[];
}

/** Compares the harness on disk now with its record. */
export async function checkHarness(cwd: string, record: HarnessRecord): Promise<HarnessCheck> {
  const current = await readHarnessFiles(cwd, record);
  const changed = changedHarness(record, current);
  return { changed, restore: planHarnessRestore(record, changed, current) };
}

/** Writes a restore plan to disk (atomically per file); each file independently, failures reported, not thrown. */
export async function applyHarnessRestore(
  cwd: string,
  restore: HarnessCheck['restore'],
): Promise<{ readonly path: string; readonly applied: boolean; readonly error?: string }[]> {
  const outcomes: { path: string; applied: boolean; error?: string }[] = [];
  for (const { path, text } of restore) {
    const target = join(cwd, path);
    try {
      if (text === null) await rm(target, { force: true });
      else await writeFileAtomic(target, text);
      outcomes.push({ path, applied: true });
    } catch (error) {
      outcomes.push({ path, applied: false, error: (error as Error).message });
    }
  }
  return outcomes;
}

import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@allium-loop/ledger';
import type { RevertAction } from './detect-violations.js';
import { sha256 } from './take-snapshot.js';

/** What happened to one revert action. */
export interface RevertOutcome {
  readonly action: RevertAction;
  readonly applied: boolean;
  /** Why it could not be applied, e.g. the engine's stored copy no longer matches its recorded hash. */
  readonly error?: string;
}

async function applyOne(cwd: string, action: RevertAction): Promise<void> {
  const target = join(cwd, action.path);
  if (action.kind === 'delete') return rm(target, { force: true });
  if (action.kind === 'restore_text') return writeFileAtomic(target, action.text);
  const stored = await readFile(join(cwd, '.allium-loop', action.storedCopy), 'utf8');
  if (sha256(stored) !== action.sha256) {
    throw new Error(
      `the engine's copy ${action.storedCopy} does not match its recorded hash (tampered with)`,
    );
  }
  return writeFileAtomic(target, stored);
}

/**
 * Carries out revert actions under `cwd`, each independently: one failure does not stop the others. A protected
 * test is restored only from a stored copy whose hash still matches the ledger's record.
 */
export async function applyReverts(cwd: string, actions: readonly RevertAction[]): Promise<RevertOutcome[]> {
  const outcomes: RevertOutcome[] = [];
  for (const action of actions) {
    try {
      await applyOne(cwd, action);
      outcomes.push({ action, applied: true });
    } catch (error) {
      outcomes.push({ action, applied: false, error: (error as Error).message });
    }
  }
  return outcomes;
}

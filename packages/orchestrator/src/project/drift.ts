import { execa } from 'execa';
import type { Ledger } from '@allium-loop/ledger';
import { gitWorkingTree } from './git.js';

/** What resume does when the working tree changed since the last recorded tick. */
export type DriftPolicy = 'reverify' | 'reset' | 'stop';

/** The working tree differs from the last checkpoint. */
export interface Drift {
  readonly tick: number;
  readonly ref: string;
  readonly object: string;
  readonly recordedTree: string;
  readonly currentTree: string;
}

/**
 * Compares the working tree (tracked and untracked files, not ignored, `.allium-loop/` excluded) with the tree of
 * the run's latest checkpoint (taken after every agent phase and every tick). `undefined` when they match, outside
 * git, before the first checkpoint, or when a call was in flight (its edits are the loop's own).
 */
export async function detectDrift(cwd: string, ledger: Ledger): Promise<Drift | undefined> {
  // A call in flight when the supervisor stopped may have edited files: those edits are the loop's own.
  if (ledger.intents.some((intent) => intent.outcome === null)) return undefined;
  // The checkpoint after the last agent phase hashes the tree fresh; tick checkpoints reuse the measured tree.
  const byTime = [...ledger.checkpoints].sort((a, b) => a.at.localeCompare(b.at));
  const latest = byTime.filter((c) => c.ref.endsWith('/after-last-phase')).at(-1) ?? byTime.at(-1);
  if (latest === undefined) return undefined;
  const recorded = await execa('git', ['rev-parse', `${latest.object}^{tree}`], { cwd, reject: false });
  if (recorded.exitCode !== 0) return undefined;
  const currentTree = await gitWorkingTree(cwd);
  if (currentTree === null || currentTree === recorded.stdout.trim()) return undefined;
  return {
    tick: latest.tick,
    ref: latest.ref,
    object: latest.object,
    recordedTree: recorded.stdout.trim(),
    currentTree,
  };
}

/**
 * Puts the files of the checkpoint back into the working tree (`git checkout <checkpoint> -- .`). Files created
 * since the checkpoint are left alone: resetting never deletes work it did not record.
 */
export async function resetToCheckpoint(cwd: string, drift: Drift): Promise<void> {
  await execa('git', ['checkout', drift.object, '--', '.'], { cwd });
  // `git checkout <commit> -- .` also stages those files; put the index back as it was.
  await execa('git', ['reset', '--quiet'], { cwd, reject: false });
}

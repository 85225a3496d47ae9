import { fstatSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import type { GitSnapshots } from '../project/git.js';

/** A file by its identity on disk, whatever its name. */
export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
}

/**
 * The regular files the engine's own stdout and stderr write to — a log the user redirected into the repository
 * (`allium-loop run … > run.log`). They change while the agent works, but they are never the agent's edits.
 */
export function engineOutputFiles(fds: readonly number[] = [1, 2]): FileIdentity[] {
  const files: FileIdentity[] = [];
  for (const fd of fds) {
    try {
      const stat = fstatSync(fd);
      if (stat.isFile()) files.push({ dev: stat.dev, ino: stat.ino });
    } catch {
      // A closed descriptor writes nowhere.
    }
  }
  return files;
}

/**
 * The paths a tick's agent touched: those whose content differs between the snapshot taken just before the call
 * (`before`) and the one taken just after it (`after`), minus the engine's own output files. A file nobody
 * changed during the call — the user's edits before or after it, a log written by the verify command — is not
 * in the set, so a revert never touches it. An edit the user makes to the repository *during* the call cannot be
 * told from the agent's and is in the set.
 */
export async function touchedPaths(
  git: GitSnapshots,
  before: string,
  after: string,
  outputs: readonly FileIdentity[] = engineOutputFiles(),
): Promise<string[]> {
  const changed = await git.changedPaths(before, after);
  if (outputs.length === 0 || changed.length === 0) return changed;
  const top = await git.top();
  if (top === null) return changed;
  const kept: string[] = [];
  for (const path of changed) {
    const stat = await lstat(join(top, path)).catch(() => undefined);
    const isOutput =
      stat?.isFile() === true && outputs.some((file) => file.dev === stat.dev && file.ino === stat.ino);
    if (!isOutput) kept.push(path);
  }
  return kept;
}

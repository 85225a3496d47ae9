import { ensureGitIgnored } from '@allium-loop/ledger';

/**
 * Keeps `.allium-loop/` out of git (ARCHITECTURE.md §6) for every kind of run, and says once what it did or why it
 * could not; the run continues either way.
 */
export async function ignoreStateDir(cwd: string, announce?: (line: string) => void): Promise<void> {
  const outcome = await ensureGitIgnored(cwd);
  if (outcome.kind === 'created' || outcome.kind === 'appended') {
    announce?.(`Added .allium-loop/ to ${outcome.file} so run state stays out of git.`);
  }
  if (outcome.kind === 'unwritable') announce?.(outcome.warning);
}

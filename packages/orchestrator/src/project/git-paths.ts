import { lstat, mkdtemp, readdir, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';

// Path-level git work of a run's session (`createGitSnapshots` in `git.ts`): paths are relative to the work tree's
// top level `top`, `/`-separated.

/** The paths whose content or mode differs between two commits. */
export async function changedPaths(top: string, from: string, to: string): Promise<string[]> {
  const out = await execa('git', ['diff-tree', '-r', '-z', '--name-only', '--no-renames', from, to], {
    cwd: top,
  });
  return out.stdout.split('\0').filter((path) => path !== '');
}

/**
 * Gives only `paths` their content in `commit`: a path the commit holds is written back, one it does not hold is
 * deleted (with the folders that deletion leaves empty). Every other file — an edit of the user's, a log being
 * written — is left as it is, and so are the user's index and HEAD. Throws when git fails.
 */
export async function restorePaths(top: string, commit: string, paths: readonly string[]): Promise<void> {
  const listed = await execa('git', ['ls-tree', '-r', '-z', '--name-only', '--full-tree', commit], {
    cwd: top,
  });
  const held = new Set(listed.stdout.split('\0').filter((path) => path !== ''));
  // Deletions first: a file the commit holds may sit where the tick left a folder.
  for (const path of paths.filter((p) => !held.has(p))) {
    await rm(join(top, path), { force: true });
    await removeEmptyFolders(top, dirname(path));
  }
  const back = paths.filter((p) => held.has(p));
  if (back.length === 0) return;
  const dir = await mkdtemp(join(tmpdir(), 'allium-loop-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(dir, 'index') };
    await execa('git', ['read-tree', commit], { cwd: top, env });
    await execa('git', ['checkout-index', '-f', '-z', '--stdin'], {
      cwd: top,
      env,
      input: `${back.join('\0')}\0`,
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Whether each of `paths` still has the content `commit` holds for it — a regular file with the same blob, or
 * absent from both. Hashes only those paths; anything else (a symlink, a folder) counts as changed.
 */
export async function pathsMatch(top: string, commit: string, paths: readonly string[]): Promise<boolean> {
  // Many paths, or a name `--stdin-paths` cannot carry: say "changed", and let the caller take a snapshot.
  if (paths.length > 1000 || paths.some((path) => path.includes('\n'))) return false;
  const listed = await execa(
    'git',
    ['--literal-pathspecs', 'ls-tree', '-r', '-z', '--full-tree', commit, '--', ...paths],
    { cwd: top },
  );
  const held = new Map<string, string>();
  for (const entry of listed.stdout.split('\0')) {
    const match = /^100(?:644|755) blob ([0-9a-f]+)\t(.*)$/s.exec(entry);
    if (match !== null) held.set(match[2]!, match[1]!);
    else if (entry !== '') return false;
  }
  const present: string[] = [];
  for (const path of paths) {
    const stat = await lstat(join(top, path)).catch(() => undefined);
    if (stat === undefined) {
      if (held.has(path)) return false;
    } else if (!stat.isFile() || !held.has(path)) return false;
    else present.push(path);
  }
  if (present.length === 0) return true;
  const hashed = await execa('git', ['hash-object', '--stdin-paths'], {
    cwd: top,
    input: `${present.join('\n')}\n`,
  });
  const hashes = hashed.stdout.split('\n');
  return present.every((path, i) => hashes[i] === held.get(path));
}

/** Removes `folder` (relative to `top`) and its parents while they are empty; never `top` itself. */
async function removeEmptyFolders(top: string, folder: string): Promise<void> {
  for (
    let current = folder;
    current !== '.' && current !== '' && current !== '/';
    current = dirname(current)
  ) {
    const entries = await readdir(join(top, current)).catch(() => undefined);
    if (entries === undefined || entries.length > 0) return;
    await rmdir(join(top, current)).catch(() => undefined);
  }
}

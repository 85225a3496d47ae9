import { execa } from 'execa';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The repository root enclosing `cwd`, or `undefined` outside git. */
export async function gitRoot(cwd: string): Promise<string | undefined> {
  const result = await execa('git', ['rev-parse', '--show-toplevel'], { cwd, reject: false });
  return result.exitCode === 0 ? result.stdout.trim() : undefined;
}

/** `git rev-parse HEAD`, or `null` (no commits yet, or not a repository). */
export async function gitHead(cwd: string): Promise<string | null> {
  const result = await execa('git', ['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd, reject: false });
  return result.exitCode === 0 ? result.stdout.trim() : null;
}

/**
 * The tree hash of the working copy — tracked and untracked files that are not ignored — written with a temporary
 * index so the user's index and branch are untouched. `null` outside git.
 */
export async function gitWorkingTree(cwd: string): Promise<string | null> {
  const dir = await mkdtemp(join(tmpdir(), 'allium-loop-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(dir, 'index') };
    const head = await gitHead(cwd);
    if (head !== null) await execa('git', ['read-tree', head], { cwd, env });
    const added = await execa('git', ['add', '-A', '.'], { cwd, env, reject: false });
    // The state directory never counts, whether or not .gitignore could be written.
    await execa('git', ['rm', '-r', '--cached', '--quiet', '--ignore-unmatch', '--', '.allium-loop'], {
      cwd,
      env,
      reject: false,
    });
    if (added.exitCode !== 0) return null;
    const tree = await execa('git', ['write-tree'], { cwd, env, reject: false });
    return tree.exitCode === 0 ? tree.stdout.trim() : null;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Records the working copy as a commit object under `refs/allium-loop/<slug>/tick-<n>` — never on the user's
 * branch. Returns the ref and object, or `undefined` outside git. `knownTree` skips hashing the working copy.
 */
export async function gitCheckpoint(
  cwd: string,
  slug: string,
  name: string,
  knownTree?: string,
): Promise<{ ref: string; object: string } | undefined> {
  // A tree hashed moments ago (the measurement of this tick) is reused instead of hashing the working copy again.
  const tree = knownTree ?? (await gitWorkingTree(cwd));
  if (tree === null) return undefined;
  const head = await gitHead(cwd);
  const parents = head === null ? [] : ['-p', head];
  const env = {
    GIT_AUTHOR_NAME: 'allium-loop',
    GIT_AUTHOR_EMAIL: 'allium-loop@localhost',
    GIT_COMMITTER_NAME: 'allium-loop',
    GIT_COMMITTER_EMAIL: 'allium-loop@localhost',
  };
  const commit = await execa(
    'git',
    ['commit-tree', tree, ...parents, '-m', `allium-loop checkpoint ${slug} ${name}`],
    { cwd, env, reject: false },
  );
  if (commit.exitCode !== 0) return undefined;
  const object = commit.stdout.trim();
  const ref = `refs/allium-loop/${slug}/${name}`;
  await execa('git', ['update-ref', ref, object], { cwd });
  return { ref, object };
}

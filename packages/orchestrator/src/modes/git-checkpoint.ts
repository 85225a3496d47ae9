import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { gitHead, gitRoot } from '../project/git.js';

/** A snapshot of the working tree as git objects: a commit (never on a branch) and its tree. */
export interface Checkpoint {
  readonly commit: string;
  readonly tree: string;
  readonly ref: string;
}

/** Where checkpoints are taken and what they leave out. */
export interface CheckpointScope {
  /** Any directory inside the repository. */
  readonly cwd: string;
  /** Absolute paths left out of snapshots and untouched by restores (the engine's state directory). */
  readonly exclude: readonly string[];
}

const IDENTITY = ['-c', 'user.name=allium-loop', '-c', 'user.email=allium-loop@localhost'];

async function git(top: string, args: readonly string[], env: Record<string, string> = {}): Promise<string> {
  const result = await execa('git', [...args], { cwd: top, env, stripFinalNewline: true });
  return result.stdout;
}

/**
 * Runs `body` with a private index seeded from HEAD's tree, so the user's index is never touched. The seed carries
 * no stat data, so `git add -A` hashes every file by its content: an edit that keeps a file's size and mtime (made
 * within the same second as the last checkpoint) is never missed, as it could be with a copy of the user's index.
 */
async function withTempIndex<T>(top: string, body: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'allium-loop-index-'));
  const env = { GIT_INDEX_FILE: join(dir, 'index') };
  try {
    if ((await gitHead(top)) !== null) await git(top, ['read-tree', 'HEAD'], env);
    return await body(env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Makes the private index hold the working tree minus the excluded paths (even ones the user tracks). */
async function mirrorWorkingTree(
  top: string,
  exclude: readonly string[],
  env: Record<string, string>,
): Promise<void> {
  // Plain `add -A`, then drop the excluded paths: an `:(exclude)` pathspec naming an ignored path makes git fail.
  await git(top, ['add', '-A', '--', '.'], env);
  for (const path of exclude) {
    const rel = relative(top, path);
    if (rel !== '' && !rel.startsWith('..'))
      await git(top, ['rm', '--cached', '-r', '-q', '--ignore-unmatch', '--', rel], env);
  }
}

/**
 * Records the working tree — tracked files and untracked ones that are not ignored — as a commit object whose
 * parent is HEAD, and points `ref` (e.g. `refs/allium-loop/<slug>/best`) at it. No branch, no index and no file of
 * the user changes. Returns `undefined` outside a git work tree. Throws when git fails.
 */
export async function createCheckpoint(
  scope: CheckpointScope,
  ref: string,
  message: string,
): Promise<Checkpoint | undefined> {
  const top = await gitRoot(scope.cwd);
  if (top === undefined) return undefined;
  const head = await gitHead(top);
  return withTempIndex(top, async (env) => {
    await mirrorWorkingTree(top, scope.exclude, env);
    const tree = await git(top, ['write-tree'], env);
    const parent = head === null ? [] : ['-p', head];
    const commit = await git(top, [...IDENTITY, 'commit-tree', tree, ...parent, '-m', message], env);
    await git(top, ['update-ref', ref, commit]);
    return { commit, tree, ref };
  });
}

/**
 * Makes the working tree match a checkpoint: files it holds are written back, and files present now (tracked, or
 * untracked and not ignored) that it does not hold are deleted. Excluded paths, ignored files, the user's index
 * and HEAD are left alone. Throws when git fails or `cwd` is not in a git work tree.
 */
export async function restoreCheckpoint(scope: CheckpointScope, commit: string): Promise<void> {
  const top = await gitRoot(scope.cwd);
  if (top === undefined)
    throw new Error(`cannot restore checkpoint ${commit}: ${scope.cwd} is not in a git work tree`);
  await withTempIndex(top, async (env) => {
    // The private index mirrors the working tree (stat data carried over), so the one-tree merge below touches
    // only the files that differ from the checkpoint and removes those it does not hold.
    await mirrorWorkingTree(top, scope.exclude, env);
    await git(top, ['read-tree', '-m', '-u', commit], env);
  });
}

/** Points `ref` at an existing checkpoint commit (e.g. `refs/allium-loop/<slug>/best` at the tick that won). */
export async function pointRef(scope: CheckpointScope, ref: string, commit: string): Promise<void> {
  const top = await gitRoot(scope.cwd);
  if (top === undefined) throw new Error(`cannot point ${ref}: ${scope.cwd} is not in a git work tree`);
  await git(top, ['update-ref', ref, commit]);
}

import { lstat, mkdtemp, readdir, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
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

async function git(
  top: string,
  args: readonly string[],
  env: Record<string, string> = {},
  input?: string,
): Promise<string> {
  const result = await execa('git', [...args], {
    cwd: top,
    env,
    stripFinalNewline: true,
    ...(input === undefined ? {} : { input }),
  });
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
 * parent is HEAD, on no ref (see {@link createCheckpoint} for one kept under a ref). No branch, no index and no file
 * of the user changes. Returns `undefined` outside a git work tree. Throws when git fails.
 */
export async function snapshotWorkingTree(
  scope: CheckpointScope,
  message: string,
): Promise<{ readonly commit: string; readonly tree: string } | undefined> {
  const top = await gitRoot(scope.cwd);
  if (top === undefined) return undefined;
  const head = await gitHead(top);
  return withTempIndex(top, async (env) => {
    await mirrorWorkingTree(top, scope.exclude, env);
    const tree = await git(top, ['write-tree'], env);
    const parent = head === null ? [] : ['-p', head];
    const commit = await git(top, [...IDENTITY, 'commit-tree', tree, ...parent, '-m', message], env);
    return { commit, tree };
  });
}

/**
 * Records the working tree as {@link snapshotWorkingTree} does and points `ref` (e.g.
 * `refs/allium-loop/<slug>/best`) at it. Returns `undefined` outside a git work tree. Throws when git fails.
 */
export async function createCheckpoint(
  scope: CheckpointScope,
  ref: string,
  message: string,
): Promise<Checkpoint | undefined> {
  const made = await snapshotWorkingTree(scope, message);
  if (made === undefined) return undefined;
  await pointRef(scope, ref, made.commit);
  return { ...made, ref };
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
    // The private index mirrors the working tree (hashed by content, stat data fresh from `add`), so the one-tree
    // merge below touches only the files that differ from the checkpoint and removes those it does not hold.
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

/** The paths (relative to the repository's top, `/`-separated) whose content or mode differs between two commits. */
export async function changedPaths(scope: CheckpointScope, from: string, to: string): Promise<string[]> {
  const top = await requireTop(scope, `compare ${from} with ${to}`);
  const out = await git(top, ['diff-tree', '-r', '-z', '--name-only', '--no-renames', from, to]);
  return out.split('\0').filter((path) => path !== '');
}

/**
 * Gives only `paths` (relative to the repository's top) their content in `commit`: a path the commit holds is
 * written back, one it does not hold is deleted (with the folders that deletion leaves empty). Every other file —
 * an edit of the user's, a log being written — is left as it is. Throws when git fails.
 */
export async function restorePaths(
  scope: CheckpointScope,
  commit: string,
  paths: readonly string[],
): Promise<void> {
  if (paths.length === 0) return;
  const top = await requireTop(scope, `restore paths from ${commit}`);
  const held = new Set(
    (await git(top, ['ls-tree', '-r', '-z', '--name-only', '--full-tree', commit]))
      .split('\0')
      .filter((path) => path !== ''),
  );
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
    await git(top, ['read-tree', commit], env);
    await git(top, ['checkout-index', '-f', '-z', '--stdin'], env, `${back.join('\0')}\0`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Whether each of `paths` (relative to the repository's top) still has the content `commit` holds for it — a
 * regular file with the same blob, or absent from both. Hashes only those paths; anything else (a symlink, a
 * folder) counts as changed.
 */
export async function pathsMatch(
  scope: CheckpointScope,
  commit: string,
  paths: readonly string[],
): Promise<boolean> {
  if (paths.length === 0) return true;
  // Many paths, or a name `--stdin-paths` cannot carry: say "changed", and let the caller take a snapshot.
  if (paths.length > 1000 || paths.some((path) => path.includes('\n'))) return false;
  const top = await requireTop(scope, `compare paths with ${commit}`);
  const listed = await git(top, [
    '--literal-pathspecs',
    'ls-tree',
    '-r',
    '-z',
    '--full-tree',
    commit,
    '--',
    ...paths,
  ]);
  const held = new Map<string, string>();
  for (const entry of listed.split('\0')) {
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
  const hashes = (await git(top, ['hash-object', '--stdin-paths'], {}, `${present.join('\n')}\n`)).split(
    '\n',
  );
  return present.every((path, i) => hashes[i] === held.get(path));
}

/** The refs under `prefix` (e.g. `refs/allium-loop/<slug>/`) and the commits they name. */
export async function listRefs(scope: CheckpointScope, prefix: string): Promise<Map<string, string>> {
  const top = await requireTop(scope, `list ${prefix}`);
  const out = await git(top, ['for-each-ref', '--format=%(refname) %(objectname)', prefix]);
  const refs = new Map<string, string>();
  for (const line of out.split('\n')) {
    const [ref, object] = line.split(' ');
    if (ref !== undefined && object !== undefined && ref !== '') refs.set(ref, object);
  }
  return refs;
}

/** Whether `commit` names a commit object the repository holds. */
export async function commitExists(scope: CheckpointScope, commit: string): Promise<boolean> {
  const top = await requireTop(scope, `look up ${commit}`);
  const found = await execa('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: top, reject: false });
  return found.exitCode === 0;
}

/**
 * Moves the current branch (or a detached HEAD) to `commit` and nothing else: `git reset --soft`, so the index
 * and the working tree stay as they are. Throws when git fails.
 */
export async function moveBranch(scope: CheckpointScope, commit: string): Promise<void> {
  const top = await requireTop(scope, `move HEAD to ${commit}`);
  await git(top, ['reset', '--soft', '--quiet', commit]);
}

/** Deletes `ref` when it exists. */
export async function deleteRef(scope: CheckpointScope, ref: string): Promise<void> {
  const top = await requireTop(scope, `delete ${ref}`);
  await execa('git', ['update-ref', '-d', ref], { cwd: top, reject: false });
}

async function requireTop(scope: CheckpointScope, what: string): Promise<string> {
  const top = await gitRoot(scope.cwd);
  if (top === undefined) throw new Error(`cannot ${what}: ${scope.cwd} is not in a git work tree`);
  return top;
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

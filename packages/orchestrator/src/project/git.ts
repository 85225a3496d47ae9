import { execa } from 'execa';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { AlliumLoopError } from '@allium-loop/errors';
import { changedPaths, pathsMatch, restorePaths } from './git-paths.js';

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

/** The files under `cwd` that commit `rev` holds (paths relative to `cwd`); empty when `rev` names no commit. */
async function filesAt(cwd: string, rev: string): Promise<string[]> {
  const listed = await execa('git', ['ls-tree', '-r', '-z', '--name-only', rev, '--', '.'], {
    cwd,
    reject: false,
  });
  return listed.exitCode === 0 ? listed.stdout.split('\0').filter((p) => p !== '') : [];
}

/**
 * The files under `cwd` that HEAD holds (paths relative to `cwd`): what was committed before the run began, since a
 * run never commits to the branch it works on. Empty outside git or before the first commit.
 */
export async function filesAtHead(cwd: string): Promise<Set<string>> {
  return new Set(await filesAt(cwd, 'HEAD'));
}

/**
 * The `.allium` files under `cwd` as they were at revision `rev` (`{ path, text }`, paths relative to `cwd`): the
 * spec before a change, for planning only what the change touched. Throws `git.unknown_revision` when `rev` does not
 * name a commit here.
 */
export async function specSourcesAt(cwd: string, rev: string): Promise<{ path: string; text: string }[]> {
  const commit = await execa(
    'git',
    ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`],
    {
      cwd,
      reject: false,
    },
  );
  if (commit.exitCode !== 0)
    throw new AlliumLoopError(`'${rev}' does not name a commit in the repository at ${cwd}.`, {
      code: 'git.unknown_revision',
      context: { cwd, rev },
      hint: 'Give a branch, tag or commit that holds the spec before the change, e.g. --since origin/main.',
    });
  const sha = commit.stdout.trim();
  const paths = (await filesAt(cwd, sha)).filter((p) => p.endsWith('.allium'));
  return Promise.all(
    paths.map(async (path) => ({
      path,
      text: (await execa('git', ['show', `${sha}:./${path}`], { cwd, stripFinalNewline: false })).stdout,
    })),
  );
}

/** A hash of the working copy and the HEAD it was taken against (`null` before the first commit). */
export interface WorkingTree {
  readonly head: string | null;
  readonly tree: string;
}

/** A checkpoint: the ref written under `refs/allium-loop/` and the commit object it points at. */
export interface Checkpoint {
  readonly ref: string;
  readonly object: string;
}

/** A commit object (never on a branch) of a working-copy hash: its tree on the HEAD it was taken against. */
export interface Snapshot extends WorkingTree {
  readonly object: string;
}

/** What a run's hashes cover. Both leave out `<cwd>/.allium-loop/`. */
export interface SnapshotOptions {
  /**
   * `folder` (the default): the files under `cwd`, the rest of the tree as HEAD holds it — a spec run works on its
   * project folder. `repository`: every file of the work tree — a loop mode reverts an agent's edit anywhere in it.
   */
  readonly cover?: 'folder' | 'repository';
}

/**
 * The git work of one run on one working copy, done with as few git processes as the answer allows: HEAD is read
 * from the repository's files (git is asked only when they say something unusual), and the index every hash starts
 * from — HEAD's tree without `.allium-loop/`, its stat data refreshed — is built once per HEAD and copied, so a
 * hash is `git add -A` and `git write-tree` on the copy. The result is exactly what a fresh temporary index gives.
 * Snapshots and checkpoints are commit objects of such a hash; the ref and path operations the loop modes revert
 * and guard their ticks with go through the same session (paths are relative to the repository's top level).
 */
export interface GitSnapshots {
  /** HEAD as `git rev-parse HEAD` says it; `null` before the first commit or outside git. */
  head(): Promise<string | null>;
  /** The top level of the work tree; `null` outside git. */
  top(): Promise<string | null>;
  /**
   * The tree of the working copy — tracked and untracked files that are not ignored, `.allium-loop/` never, nor
   * any of `leaveOut` (absolute paths) — and the HEAD it was hashed against. The user's index and branch are
   * untouched. `null` outside git.
   */
  workingTree(leaveOut?: readonly string[]): Promise<WorkingTree | null>;
  /**
   * Records the working copy (or `known`, a hash taken moments ago) as a commit object whose parent is HEAD, on no
   * ref. The same tree on the same HEAD as the last snapshot reuses its commit. `undefined` outside git.
   */
  snapshot(
    message: string,
    options?: { readonly known?: WorkingTree; readonly leaveOut?: readonly string[] },
  ): Promise<Snapshot | undefined>;
  /**
   * Records the working copy as a commit object under `refs/allium-loop/<slug>/<name>` — never on the user's
   * branch. `known` (a hash taken moments ago) is reused instead of hashing again; a ref this session last
   * pointed at the same commit is not written again. `undefined` outside git.
   */
  checkpoint(slug: string, name: string, known?: WorkingTree): Promise<Checkpoint | undefined>;
  /** Points `ref` at an existing commit. Throws outside git or when git fails. */
  pointRef(ref: string, object: string): Promise<void>;
  /** Deletes `ref` when it exists. */
  deleteRef(ref: string): Promise<void>;
  /** The refs under `prefix` (e.g. `refs/allium-loop/<slug>/`) and the commits they name. */
  listRefs(prefix: string): Promise<Map<string, string>>;
  /** Whether `object` names a commit the repository holds. */
  commitExists(object: string): Promise<boolean>;
  /**
   * Moves the current branch (or a detached HEAD) to `object` and nothing else (`git reset --soft`: the index and
   * the working tree stay as they are). Throws when git fails.
   */
  moveBranch(object: string): Promise<void>;
  /** The paths whose content or mode differs between two commits. */
  changedPaths(from: string, to: string): Promise<string[]>;
  /**
   * Gives only `paths` their content in `object`: a path it holds is written back, one it does not hold is deleted
   * (with the folders that leaves empty). Every other file is left as it is. Throws when git fails.
   */
  restorePaths(object: string, paths: readonly string[]): Promise<void>;
  /**
   * Whether each of `paths` still has the content `object` holds for it (a regular file with the same blob, or
   * absent from both), hashing only those paths.
   */
  pathsMatch(object: string, paths: readonly string[]): Promise<boolean>;
}

/** Where a repository keeps its files (HEAD in `gitDir`, refs in `commonDir`) and where `cwd` sits in it. */
interface GitDirs {
  readonly top: string;
  readonly gitDir: string;
  readonly commonDir: string;
  /** `cwd` relative to the top level, `/`-terminated (`''` at the top). */
  readonly prefix: string;
}

const OBJECT_ID = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;
const COMMITTER = {
  GIT_AUTHOR_NAME: 'allium-loop',
  GIT_AUTHOR_EMAIL: 'allium-loop@localhost',
  GIT_COMMITTER_NAME: 'allium-loop',
  GIT_COMMITTER_EMAIL: 'allium-loop@localhost',
};

async function readText(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch(() => undefined);
}

/** The repository's directories, or `null` outside git. One git process. */
async function findGitDirs(cwd: string): Promise<GitDirs | null> {
  const result = await execa(
    'git',
    ['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir', '--show-prefix'],
    {
      cwd,
      reject: false,
    },
  );
  if (result.exitCode !== 0) return null;
  const [top, gitDir, common, prefix] = result.stdout.split('\n');
  if (top === undefined || gitDir === undefined || common === undefined) return null;
  return { top, gitDir, commonDir: isAbsolute(common) ? common : join(cwd, common), prefix: prefix ?? '' };
}

/**
 * HEAD read from the repository's files: a detached object id, or a branch's loose ref or packed-refs line;
 * `null` for a branch with no commit yet. `undefined` when the files say something only git should interpret
 * (reftable storage, a symbolic ref chain, an unreadable HEAD).
 */
async function readHeadFromFiles(dirs: GitDirs): Promise<string | null | undefined> {
  const head = (await readText(join(dirs.gitDir, 'HEAD')))?.trim();
  if (head === undefined) return undefined;
  if (OBJECT_ID.test(head)) return head;
  const ref = /^ref: (refs\/heads\/[^\s]+)$/.exec(head)?.[1];
  if (ref === undefined || ref === 'refs/heads/.invalid') return undefined;
  const loose = (await readText(join(dirs.commonDir, ref)))?.trim();
  if (loose !== undefined) return OBJECT_ID.test(loose) ? loose : undefined;
  const packed = await readText(join(dirs.commonDir, 'packed-refs'));
  for (const line of (packed ?? '').split('\n')) {
    const [id, name] = line.split(' ');
    if (name === ref && id !== undefined && OBJECT_ID.test(id)) return id;
  }
  return null;
}

const IGNORED_PATHS = 'The following paths are ignored by one of your .gitignore files:';

/**
 * `git add` exits 1 when a pathspec names an ignored path, even an excluding one, after adding everything else:
 * that is no failure when the only path it names is the state directory itself (`.allium-loop/` ignored).
 */
function onlyStateDirIgnored(stderr: string, prefix: string): boolean {
  const [header, ...paths] = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');
  return header === IGNORED_PATHS && paths.length > 0 && paths.every((p) => p === `${prefix}.allium-loop`);
}

/** Writes a commit object (never on a branch) of `state.tree` on `state.head`; `undefined` when git refuses. */
async function commitTree(cwd: string, state: WorkingTree, message: string): Promise<string | undefined> {
  const parents = state.head === null ? [] : ['-p', state.head];
  const commit = await execa('git', ['commit-tree', state.tree, ...parents, '-m', message], {
    cwd,
    env: COMMITTER,
    reject: false,
  });
  return commit.exitCode === 0 ? commit.stdout.trim() : undefined;
}

/** Takes `.allium-loop/` out of the index `env` names: the state directory is never part of a hash. */
async function dropStateDir(cwd: string, env: Readonly<Record<string, string>>): Promise<void> {
  await execa('git', ['rm', '-r', '--cached', '--quiet', '--ignore-unmatch', '--', '.allium-loop'], {
    cwd,
    env,
    reject: false,
  });
}

/**
 * Takes `leaveOut` (absolute paths; those outside the work tree are skipped) out of the index `env` names: a
 * plain `rm --cached` after `add`, since an `:(exclude)` pathspec naming an ignored path makes `git add` fail.
 */
async function dropPaths(
  top: string,
  env: Readonly<Record<string, string>>,
  leaveOut: readonly string[],
): Promise<void> {
  const paths = leaveOut.map((path) => relative(top, path)).filter((p) => p !== '' && !p.startsWith('..'));
  if (paths.length === 0) return;
  await execa(
    'git',
    ['--literal-pathspecs', 'rm', '-r', '--cached', '--quiet', '--ignore-unmatch', '--', ...paths],
    {
      cwd: top,
      env,
      reject: false,
    },
  );
}

/** The tree of the working copy from a fresh temporary index (read-tree, add, rm, write-tree): the slow way. */
async function hashAfresh(
  cwd: string,
  dirs: GitDirs,
  head: string | null,
  cover: string,
  leaveOut: readonly string[],
): Promise<WorkingTree | null> {
  const folder = await mkdtemp(join(tmpdir(), 'allium-loop-index-'));
  try {
    const env = { GIT_INDEX_FILE: join(folder, 'index') };
    if (head !== null) await execa('git', ['read-tree', head], { cwd, env });
    const added = await execa('git', ['add', '-A', '--', cover], { cwd, env, reject: false });
    await dropStateDir(cwd, env);
    await dropPaths(dirs.top, env, leaveOut);
    if (added.exitCode !== 0) return null;
    const tree = await execa('git', ['write-tree'], { cwd, env, reject: false });
    return tree.exitCode === 0 ? { head, tree: tree.stdout.trim() } : null;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * The git work of a run on `cwd`, keeping its index files in `stateDir` (the run's own folder, which the hashes
 * leave out only when it lies under `.allium-loop/`). One process at a time per `stateDir`.
 */
export function createGitSnapshots(
  cwd: string,
  stateDir: string,
  options: SnapshotOptions = {},
): GitSnapshots {
  return new GitSession(cwd, stateDir, options.cover === 'repository' ? ':/' : '.');
}

/** HEAD's index, ready to copy: the HEAD it holds, its file, and the time git wrote it. */
interface BaseIndex {
  readonly head: string | null;
  readonly file: string;
  readonly mtime: Date;
}

class GitSession implements GitSnapshots {
  private dirs: Promise<GitDirs | null> | undefined;
  private folder: Promise<string> | undefined;
  private base: BaseIndex | undefined;
  private copies = 0;
  private lastCommit: Snapshot | undefined;
  /** The commit this session last pointed each ref at (a checkpoint under a name already there is not rewritten). */
  private readonly pointed = new Map<string, string>();

  /** `cover` is the pathspec every hash adds: `.` (the folder) or `:/` (the whole work tree). */
  constructor(
    private readonly cwd: string,
    private readonly stateDir: string,
    private readonly cover: string,
  ) {}

  async head(): Promise<string | null> {
    const found = await this.gitDirs();
    if (found === null) return null;
    const fromFiles = await readHeadFromFiles(found);
    return fromFiles === undefined ? gitHead(this.cwd) : fromFiles;
  }

  async top(): Promise<string | null> {
    return (await this.gitDirs())?.top ?? null;
  }

  async workingTree(leaveOut: readonly string[] = []): Promise<WorkingTree | null> {
    const found = await this.gitDirs();
    if (found === null) return null;
    const at = await this.head();
    const start = await this.baseIndex(at);
    const file = join(await this.indexFolder(), `index-${String(process.pid)}-${String((this.copies += 1))}`);
    try {
      if (at !== null) {
        await copyFile(start.file, file);
        // The copy keeps the original's time, so git's racy-entry check judges its stat data as written.
        await utimes(file, start.mtime, start.mtime);
      }
      const env = { GIT_INDEX_FILE: file, LC_ALL: 'C' };
      // The state directory never counts, whether or not .gitignore could be written.
      const added = await execa(
        'git',
        ['-c', 'advice.addIgnoredFile=false', 'add', '-A', '--', this.cover, ':(exclude).allium-loop'],
        { cwd: this.cwd, env, reject: false },
      );
      if (added.exitCode !== 0 && !onlyStateDirIgnored(added.stderr, found.prefix))
        return await hashAfresh(this.cwd, found, at, this.cover, leaveOut);
      await dropPaths(found.top, env, leaveOut);
      const tree = await execa('git', ['write-tree'], { cwd: this.cwd, env, reject: false });
      return tree.exitCode === 0 ? { head: at, tree: tree.stdout.trim() } : null;
    } finally {
      await rm(file, { force: true });
    }
  }

  async snapshot(
    message: string,
    options: { readonly known?: WorkingTree; readonly leaveOut?: readonly string[] } = {},
  ): Promise<Snapshot | undefined> {
    const state = options.known ?? (await this.workingTree(options.leaveOut));
    if (state === null) return undefined;
    // The same tree on the same HEAD as the last snapshot (a tick recorded right after a phase that edited
    // nothing) reuses that commit instead of writing another.
    const last = this.lastCommit;
    const reused = last?.tree === state.tree && last.head === state.head ? last.object : undefined;
    const object = reused ?? (await commitTree(this.cwd, state, message));
    if (object === undefined) return undefined;
    this.lastCommit = { head: state.head, tree: state.tree, object };
    return this.lastCommit;
  }

  async checkpoint(slug: string, name: string, known?: WorkingTree): Promise<Checkpoint | undefined> {
    const made = await this.snapshot(
      `allium-loop checkpoint ${slug} ${name}`,
      known === undefined ? {} : { known },
    );
    if (made === undefined) return undefined;
    const ref = `refs/allium-loop/${slug}/${name}`;
    // `after-last-phase` after a phase that edited nothing already names this commit: no `update-ref` for it.
    if (this.pointed.get(ref) !== made.object) await this.pointRef(ref, made.object);
    return { ref, object: made.object };
  }

  async pointRef(ref: string, object: string): Promise<void> {
    this.pointed.delete(ref);
    await execa('git', ['update-ref', ref, object], { cwd: await this.requireTop(`point ${ref}`) });
    this.pointed.set(ref, object);
  }

  async deleteRef(ref: string): Promise<void> {
    this.pointed.delete(ref);
    await execa('git', ['update-ref', '-d', ref], {
      cwd: await this.requireTop(`delete ${ref}`),
      reject: false,
    });
  }

  async listRefs(prefix: string): Promise<Map<string, string>> {
    const top = await this.requireTop(`list ${prefix}`);
    const out = await execa('git', ['for-each-ref', '--format=%(refname) %(objectname)', prefix], {
      cwd: top,
    });
    const refs = new Map<string, string>();
    for (const line of out.stdout.split('\n')) {
      const [ref, object] = line.split(' ');
      if (ref !== undefined && object !== undefined && ref !== '') refs.set(ref, object);
    }
    return refs;
  }

  async commitExists(object: string): Promise<boolean> {
    const top = await this.requireTop(`look up ${object}`);
    const found = await execa('git', ['cat-file', '-e', `${object}^{commit}`], { cwd: top, reject: false });
    return found.exitCode === 0;
  }

  async moveBranch(object: string): Promise<void> {
    await execa('git', ['reset', '--soft', '--quiet', object], {
      cwd: await this.requireTop(`move HEAD to ${object}`),
    });
  }

  async changedPaths(from: string, to: string): Promise<string[]> {
    return changedPaths(await this.requireTop(`compare ${from} with ${to}`), from, to);
  }

  async restorePaths(object: string, paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    await restorePaths(await this.requireTop(`restore paths from ${object}`), object, paths);
  }

  async pathsMatch(object: string, paths: readonly string[]): Promise<boolean> {
    if (paths.length === 0) return true;
    return pathsMatch(await this.requireTop(`compare paths with ${object}`), object, paths);
  }

  private async requireTop(what: string): Promise<string> {
    const top = await this.top();
    if (top === null)
      throw new AlliumLoopError(`cannot ${what}: ${this.cwd} is not in a git work tree.`, {
        code: 'git.not_a_work_tree',
        context: { cwd: this.cwd },
      });
    return top;
  }

  private gitDirs(): Promise<GitDirs | null> {
    return (this.dirs ??= findGitDirs(this.cwd));
  }

  private indexFolder(): Promise<string> {
    return (this.folder ??= mkdir(this.stateDir, { recursive: true }).then(() => this.stateDir));
  }

  /** HEAD's tree without the state directory, stat data refreshed: where every hash against `at` starts. */
  private async baseIndex(at: string | null): Promise<BaseIndex> {
    if (this.base?.head === at) return this.base;
    const file = join(await this.indexFolder(), `base-index-${at ?? 'unborn'}`);
    await rm(file, { force: true });
    if (at !== null) await writeBaseIndex(this.cwd, at, file);
    if (this.base !== undefined) await rm(this.base.file, { force: true });
    this.base = { head: at, file, mtime: (await stat(file).catch(() => undefined))?.mtime ?? new Date(0) };
    return this.base;
  }
}

/** Writes HEAD's tree into the index `file`, without `.allium-loop/`, with the working copy's stat data. */
async function writeBaseIndex(cwd: string, head: string, file: string): Promise<void> {
  const env = { GIT_INDEX_FILE: file };
  await execa('git', ['read-tree', head], { cwd, env });
  await dropStateDir(cwd, env);
  // Stat data lets every later `add -A` skip the files that still match HEAD instead of hashing them again.
  await execa('git', ['update-index', '-q', '--refresh'], { cwd, env, reject: false });
}

/**
 * The tree hash of the working copy — tracked and untracked files that are not ignored — written with a temporary
 * index so the user's index and branch are untouched. `null` outside git. A run hashes through one
 * {@link createGitSnapshots} instead, which reuses its work between hashes.
 */
export async function gitWorkingTree(cwd: string): Promise<string | null> {
  const folder = await mkdtemp(join(tmpdir(), 'allium-loop-index-'));
  try {
    return (await createGitSnapshots(cwd, folder).workingTree())?.tree ?? null;
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * Records the working copy as a commit object under `refs/allium-loop/<slug>/<name>` — never on the user's
 * branch. Returns the ref and object, or `undefined` outside git.
 */
export async function gitCheckpoint(
  cwd: string,
  slug: string,
  name: string,
): Promise<Checkpoint | undefined> {
  const folder = await mkdtemp(join(tmpdir(), 'allium-loop-index-'));
  try {
    return await createGitSnapshots(cwd, folder).checkpoint(slug, name);
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

import { createHash } from 'node:crypto';
import { cp, mkdir, rm, stat, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { execa } from 'execa';
import { AlliumLoopError } from '@allium-loop/errors';
import { gitCheckpoint, gitRoot, gitWorkingTree } from '../project/git.js';
import { sliceKey } from '../scale-out/stored-plan.js';

/** One slice's git worktree: where its loop works (`cwd`, the project folder inside it) and on which branch. */
export interface SliceWorkspace {
  readonly sliceId: string;
  /** The worktree's root. */
  readonly dir: string;
  /** The project folder inside the worktree (the worktree root, or the same sub-folder the run started in). */
  readonly cwd: string;
  readonly branch: string;
}

/** A merge of a finished slice into the merged base: the new merged commit, or the files that conflict. */
export type MergeOutcome =
  | {
      readonly ok: true;
      readonly commit: string;
      /**
       * The merged tree is exactly the slice's own tree (nothing was merged since the slice started): what the
       * slice's witness saw in its worktree is what the main tree now holds.
       */
      readonly unchanged: boolean;
    }
  | { readonly ok: false; readonly conflicts: readonly string[] };

/** The effects of running slices at once: worktrees, commits, merges, and the main tree. */
export interface SliceWorkspaces {
  /** The main working tree as a commit (parent HEAD) under `refs/allium-loop/<slug>/merged`: a wave's first base. */
  snapshot(): Promise<string>;
  /** Records `commit` as the merged base (`refs/allium-loop/<slug>/merged`). */
  setMerged(commit: string): Promise<void>;
  /** A new worktree for `sliceId` on its own branch at `base`. */
  create(sliceId: string, base: string): Promise<SliceWorkspace>;
  /**
   * Commits everything the slice's loop left in its worktree (the state folder aside) and copies the slice's
   * records (`.allium-loop/<slug>/`) into the main tree's; returns the commit.
   */
  commit(workspace: SliceWorkspace): Promise<string>;
  /** Merges `commit` into `merged` without touching any working tree; conflicts are reported, never resolved. */
  merge(merged: string, commit: string, sliceId: string): Promise<MergeOutcome>;
  /**
   * Makes the main working tree hold exactly the files of `commit` (the state folder aside); true if it changed.
   * `from`: the commit the main tree is known to hold now (the merged base the supervisor put there); only its
   * difference to `commit` is applied, and when that does not apply cleanly the tree is measured and moved as without.
   */
  showInMain(commit: string, from?: string): Promise<boolean>;
  /** Removes a slice's worktree and its branch. */
  remove(workspace: SliceWorkspace): Promise<void>;
  /** Removes every worktree and branch of this run (left by a crash, or still there at the end); their paths. */
  removeAll(): Promise<string[]>;
}

const IDENTITY = {
  GIT_AUTHOR_NAME: 'allium-loop',
  GIT_AUTHOR_EMAIL: 'allium-loop@localhost',
  GIT_COMMITTER_NAME: 'allium-loop',
  GIT_COMMITTER_EMAIL: 'allium-loop@localhost',
};

/** Paths a slice commit never holds: the state folder, and the `node_modules` link into the main tree. */
const NOT_COMMITTED = ['.allium-loop', 'node_modules'];

async function git(cwd: string, args: readonly string[], env: Record<string, string> = {}) {
  const result = await execa('git', [...args], { cwd, env, reject: false, stripFinalNewline: true });
  if (result.exitCode !== 0)
    throw new AlliumLoopError(
      `git ${args.join(' ')} failed: ${result.stderr.trim() || result.stdout.trim()}`,
      {
        code: 'parallel.git_failed',
        context: { cwd, exitCode: result.exitCode ?? null },
      },
    );
  return result.stdout;
}

/**
 * Where the worktrees of a run live: a folder under the system's temp dir, outside the project, so that the
 * project's own test command, spec discovery and file walks never see a slice's copy. One per repository and run.
 */
export function worktreeRoot(repoRoot: string, slug: string): string {
  const id = createHash('sha256').update(`${repoRoot}\0${slug}`).digest('hex').slice(0, 16);
  return join(tmpdir(), 'allium-loop-worktrees', id);
}

/** The branch prefix of a run's slice worktrees. */
export function branchPrefix(slug: string): string {
  return `allium-loop/${slug}/slice/`;
}

/**
 * Slice worktrees over git: each slice in `git worktree add` of its own branch `allium-loop/<slug>/slice/<key>`
 * under {@link worktreeRoot}, merged back with `git merge-tree` (no working tree is touched by a merge), and the
 * main tree updated with `git apply` of the difference. `node_modules` of the project is linked into each worktree,
 * so its tools resolve as in the main tree.
 */
export async function createGitWorktrees(cwd: string, slug: string): Promise<SliceWorkspaces> {
  const root = await gitRoot(cwd);
  if (root === undefined)
    throw new AlliumLoopError(`--concurrency needs a git repository; ${cwd} is not in one.`, {
      code: 'parallel.not_git',
      hint: 'Run `git init` and commit, or run with --concurrency 1.',
    });
  const sub = relative(root, cwd);
  const base = worktreeRoot(root, slug);
  const prefix = branchPrefix(slug);
  const mergedRef = `refs/allium-loop/${slug}/merged`;

  // Two things the slices share run one slice at a time; everything else a slice does in its own worktree still runs
  // at once. Both were seen to fail when a killed wave resumed with three slices starting together
  // (reliability/parallel-kill.test.ts):
  // - `git worktree add`, `remove` and `prune` all rewrite `.git/worktrees/`: a prune dropped a worktree another
  //   slice was still adding ("failed to read .git/worktrees/<key>/commondir");
  // - copying a slice's records into the main tree's state folder: two copies made the same new folder at once
  //   (`EEXIST … mkdir '.allium-loop/<slug>/slices'`).
  const oneAtATime = serially();
  const copyingRecords = serially();

  const removeAll = (): Promise<string[]> => oneAtATime(removeAllNow);
  const removeAllNow = async (): Promise<string[]> => {
    const listing = await git(root, ['worktree', 'list', '--porcelain']);
    const removed: string[] = [];
    for (const block of listing.split(/\n\n+/)) {
      const path = /^worktree (.+)$/m.exec(block)?.[1];
      const branch = /^branch refs\/heads\/(.+)$/m.exec(block)?.[1];
      if (path === undefined || branch === undefined || !branch.startsWith(prefix)) continue;
      await execa('git', ['worktree', 'remove', '--force', '--force', path], { cwd: root, reject: false });
      await rm(path, { recursive: true, force: true });
      removed.push(path);
    }
    await execa('git', ['worktree', 'prune'], { cwd: root, reject: false });
    const branches = await git(root, ['for-each-ref', '--format=%(refname:short)', `refs/heads/${prefix}`]);
    for (const branch of branches.split('\n').filter((b) => b !== ''))
      await execa('git', ['branch', '-D', branch], { cwd: root, reject: false });
    await rm(base, { recursive: true, force: true });
    return removed;
  };

  const treeOf = async (commit: string) => git(root, ['rev-parse', `${commit}^{tree}`]);

  return {
    async snapshot() {
      const made = await gitCheckpoint(cwd, slug, 'merged');
      if (made === undefined)
        throw new AlliumLoopError('The working tree could not be recorded as a commit for --concurrency.', {
          code: 'parallel.snapshot_failed',
        });
      return made.object;
    },
    async setMerged(commit) {
      await git(root, ['update-ref', mergedRef, commit]);
    },
    async create(sliceId, at) {
      const key = sliceKey(sliceId);
      const dir = join(base, key);
      const branch = `${prefix}${key}`;
      await oneAtATime(async () => {
        await execa('git', ['worktree', 'remove', '--force', '--force', dir], { cwd: root, reject: false });
        await rm(dir, { recursive: true, force: true });
        await execa('git', ['worktree', 'prune'], { cwd: root, reject: false });
        await mkdir(base, { recursive: true });
        await git(root, ['worktree', 'add', '--force', '-B', branch, dir, at]);
      });
      const workspace = { sliceId, dir, cwd: join(dir, sub), branch };
      await linkNodeModules(join(root, 'node_modules'), join(dir, 'node_modules'));
      if (sub !== '') await linkNodeModules(join(cwd, 'node_modules'), join(workspace.cwd, 'node_modules'));
      return workspace;
    },
    async commit(workspace) {
      await git(workspace.dir, ['add', '-A', '--', '.']);
      await git(workspace.dir, [
        'rm',
        '-r',
        '--cached',
        '--quiet',
        '--ignore-unmatch',
        '--',
        ...NOT_COMMITTED,
      ]);
      await git(
        workspace.dir,
        ['commit', '--allow-empty', '--no-verify', '-q', '-m', `allium-loop: slice ${workspace.sliceId}`],
        IDENTITY,
      );
      // The slice's records (result files, transcripts, the engine's copies of its generated tests) outlive it.
      // Its test runs' output and its git index files are scratch of its own tree; the main tree's test run (a
      // merge's) may be writing its own now, and the main run's git index files have the same names (a slice starts
      // at the commit the main tree is at): copied over, one was gone when the main run went to replace it
      // (`ENOENT … unlink '.allium-loop/<slug>/git-index/base-index-…'`).
      const records = join(workspace.cwd, '.allium-loop', slug);
      const scratch = [join(records, 'test-runs'), join(records, 'git-index')];
      const kept = (source: string): boolean =>
        scratch.every((folder) => source !== folder && !source.startsWith(`${folder}/`));
      if ((await stat(records).catch(() => undefined)) !== undefined)
        await copyingRecords(() =>
          cp(records, join(cwd, '.allium-loop', slug), { recursive: true, force: true, filter: kept }),
        );
      return git(workspace.dir, ['rev-parse', 'HEAD']);
    },
    async merge(merged, commit, sliceId) {
      // The slice started from `merged` and nothing was merged since: its commit is the merge (a fast-forward).
      const parent = await execa('git', ['rev-parse', '--verify', '--quiet', `${commit}^1`], {
        cwd: root,
        reject: false,
      });
      if (parent.exitCode === 0 && parent.stdout.trim() === merged)
        return { ok: true, commit, unchanged: true };
      const result = await execa('git', ['merge-tree', '--write-tree', '--name-only', merged, commit], {
        cwd: root,
        reject: false,
      });
      const [tree = '', ...rest] = result.stdout.split('\n');
      if (result.exitCode === 1) {
        const conflicts = rest.slice(0, rest.indexOf('') === -1 ? rest.length : rest.indexOf(''));
        return { ok: false, conflicts };
      }
      if (result.exitCode !== 0)
        throw new AlliumLoopError(`git merge-tree failed: ${result.stderr.trim()}`, {
          code: 'parallel.git_failed',
        });
      const made = await git(
        root,
        ['commit-tree', tree.trim(), '-p', merged, '-p', commit, '-m', `allium-loop: merge slice ${sliceId}`],
        IDENTITY,
      );
      return { ok: true, commit: made.trim(), unchanged: tree.trim() === (await treeOf(commit)) };
    },
    async showInMain(commit, from) {
      if (from !== undefined) {
        const patch = await execa('git', ['diff', '--binary', '--full-index', from, commit], {
          cwd: root,
          stripFinalNewline: false,
        });
        if (patch.stdout.trim() === '') return false;
        const applied = await execa('git', ['apply', '--whitespace=nowarn', '-'], {
          cwd: root,
          input: patch.stdout,
          reject: false,
        });
        if (applied.exitCode === 0) return true;
      }
      const current = await gitWorkingTree(cwd);
      const target = await treeOf(commit);
      if (current === null || current === target) return false;
      const patch = await execa('git', ['diff', '--binary', '--full-index', current, target], {
        cwd: root,
        stripFinalNewline: false,
      });
      if (patch.stdout.trim() === '') return false;
      await execa('git', ['apply', '--whitespace=nowarn', '-'], { cwd: root, input: patch.stdout });
      return true;
    },
    remove: (workspace) =>
      oneAtATime(async () => {
        await execa('git', ['worktree', 'remove', '--force', '--force', workspace.dir], {
          cwd: root,
          reject: false,
        });
        await rm(workspace.dir, { recursive: true, force: true });
        await execa('git', ['worktree', 'prune'], { cwd: root, reject: false });
        await execa('git', ['branch', '-D', workspace.branch], { cwd: root, reject: false });
      }),
    removeAll,
  };
}

/** A queue: the work given to it runs one at a time, in order; a failure fails that work only. */
function serially(): <T>(work: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (work) => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
}

async function linkNodeModules(from: string, to: string): Promise<void> {
  if ((await stat(from).catch(() => undefined))?.isDirectory() !== true) return;
  if ((await stat(to).catch(() => undefined)) !== undefined) return;
  await symlink(from, to, 'dir').catch(() => undefined);
}

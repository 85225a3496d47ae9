import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { createGitWorktrees } from './git-worktrees.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd })).stdout;
}

/** A repository with `a.txt`, its worktrees, and a slice commit (from the merged base) that changes `a.txt`. */
async function setUp() {
  const dir = await mkdtemp(join(tmpdir(), 'allium-loop-worktrees-test-'));
  dirs.push(dir);
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'config', 'user.email', 'dev@example.com');
  await git(dir, 'config', 'user.name', 'dev');
  await writeFile(join(dir, '.gitignore'), '.allium-loop/\n');
  await writeFile(join(dir, 'a.txt'), 'one\n');
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '-m', 'start');
  const workspaces = await createGitWorktrees(dir, 'slug');
  const base = await workspaces.snapshot();
  const workspace = await workspaces.create('s:1', base);
  await writeFile(join(workspace.cwd, 'a.txt'), 'two\n');
  // The slice loop's state folder (ignored) is never committed.
  await mkdir(join(workspace.cwd, '.allium-loop', 'slug'), { recursive: true });
  await writeFile(join(workspace.cwd, '.allium-loop', 'slug', 'result.json'), '{}\n');
  const commit = await workspaces.commit(workspace);
  expect((await git(dir, 'ls-tree', '-r', '--name-only', commit)).split('\n').sort()).toEqual([
    '.gitignore',
    'a.txt',
  ]);
  await workspaces.remove(workspace);
  return { dir, workspaces, base, commit };
}

describe('git worktrees of slices run at once', () => {
  it('merges a slice that started from the merged base as itself, its own tree', async () => {
    const { workspaces, base, commit } = await setUp();
    expect(await workspaces.merge(base, commit, 's:1')).toEqual({ ok: true, commit, unchanged: true });
  }, 60_000);

  it('moves the main tree by the known difference, and measures it when the main tree is not what was known', async () => {
    const { dir, workspaces, base, commit } = await setUp();
    expect(await workspaces.showInMain(commit, base)).toBe(true);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('two\n');
    // Back to the base, then someone edits a.txt: the difference base → commit no longer applies; the main tree
    // still ends up holding exactly the commit's files.
    expect(await workspaces.showInMain(base, commit)).toBe(true);
    await writeFile(join(dir, 'a.txt'), 'edited\n');
    expect(await workspaces.showInMain(commit, base)).toBe(true);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('two\n');
    await workspaces.removeAll();
  }, 60_000);
});

describe('slices started, committed and removed all at once', () => {
  it('make, commit and remove their worktrees together without failing, and copy no git index files', async () => {
    const { dir, workspaces, base } = await setUp();
    // Six at once, each with its records (a result file and the git index files a slice's run keeps under
    // `git-index/`, named as the main run's) in folders no copy has made yet.
    const keys = ['a', 'b', 'c', 'd', 'e', 'f'];
    const mainIndex = join(dir, '.allium-loop', 'slug', 'git-index', 'base-index-x');
    await mkdir(join(dir, '.allium-loop', 'slug', 'git-index'), { recursive: true });
    await writeFile(mainIndex, 'main\n');
    await Promise.all(
      keys.map(async (key) => {
        const workspace = await workspaces.create(`s:${key}`, base);
        const records = join(workspace.cwd, '.allium-loop', 'slug');
        await mkdir(join(records, 'slices', key), { recursive: true });
        await writeFile(join(records, 'slices', key, 'result.json'), `${key}\n`);
        await mkdir(join(records, 'git-index'), { recursive: true });
        await writeFile(join(records, 'git-index', 'base-index-x'), `${key}\n`);
        await writeFile(join(workspace.cwd, `${key}.txt`), `${key}\n`);
        await workspaces.commit(workspace);
        await workspaces.remove(workspace);
      }),
    );
    for (const key of keys)
      expect(await readFile(join(dir, '.allium-loop', 'slug', 'slices', key, 'result.json'), 'utf8')).toBe(
        `${key}\n`,
      );
    expect(await readFile(mainIndex, 'utf8')).toBe('main\n');
    expect(await workspaces.removeAll()).toEqual([]);
  }, 120_000);
});

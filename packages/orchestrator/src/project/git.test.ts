import { execa } from 'execa';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createGitSnapshots, gitCheckpoint, gitHead, gitWorkingTree } from './git.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'git-snapshots-'));
  dirs.push(dir);
  return dir;
}

const git = async (cwd: string, ...args: string[]) =>
  (await execa('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd })).stdout.trim();

async function write(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

async function repo(files: Record<string, string>): Promise<string> {
  const dir = await tempDir();
  await git(dir, 'init', '-q');
  await write(dir, files);
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '-m', 'start');
  return dir;
}

/** What the user's own index holds: nothing staged, and the files it tracks. */
async function userIndex(cwd: string): Promise<{ staged: string; files: string }> {
  return { staged: await git(cwd, 'diff', '--cached', '--name-only'), files: await git(cwd, 'ls-files') };
}

/** The tree a fresh temporary index gives, by plain git commands: the answer every hash must equal. */
async function freshTree(cwd: string): Promise<string> {
  const scratch = await tempDir();
  const env = { GIT_INDEX_FILE: join(scratch, 'index') };
  const head = await execa('git', ['rev-parse', '--verify', '-q', 'HEAD'], { cwd, reject: false });
  if (head.exitCode === 0) await execa('git', ['read-tree', head.stdout.trim()], { cwd, env });
  await execa('git', ['add', '-A', '.'], { cwd, env });
  await execa('git', ['rm', '-r', '--cached', '-q', '--ignore-unmatch', '--', '.allium-loop'], { cwd, env });
  return (await execa('git', ['write-tree'], { cwd, env })).stdout.trim();
}

describe('createGitSnapshots', () => {
  it('hashes like a fresh index through edits, deletions, new files, commits and ignore changes', async () => {
    const dir = await repo({
      'src/a.js': 'a\n',
      'src/b.js': 'b\n',
      'build/tracked.js': 'kept although ignored\n',
      '.gitignore': 'build/\n',
    });
    const snapshots = createGitSnapshots(dir, join(dir, '.allium-loop', 'run', 'git-index'));
    const steps: (() => Promise<unknown>)[] = [
      async () => undefined,
      () => write(dir, { 'src/a.js': 'a changed\n', 'src/new.js': 'new\n' }),
      () => rm(join(dir, 'src/b.js')),
      () =>
        write(dir, { 'build/tracked.js': 'tracked and ignored, edited\n', 'build/other.js': 'ignored\n' }),
      () => write(dir, { '.allium-loop/run.json': '{}', '.allium-loop/x/y.txt': 'state' }),
      () => write(dir, { '.gitignore': 'build/\n.allium-loop/\n', 'src/a.js': 'state dir ignored\n' }),
      async () => {
        await git(dir, 'add', '-A');
        await git(dir, 'commit', '-q', '-m', 'agent commit');
      },
      () => write(dir, { '.gitignore': 'build/\nsrc/new.js\n' }),
      () => rm(join(dir, 'build/tracked.js')),
      () => write(dir, { 'build/tracked.js': 'back again\n' }),
      async () => {
        await git(dir, 'checkout', '-q', '--detach');
        await git(dir, 'pack-refs', '--all');
      },
      () => write(dir, { 'src/a.js': 'a after packing\n' }),
    ];
    for (const step of steps) {
      await step();
      const hashed = await snapshots.workingTree();
      expect(hashed?.tree).toBe(await freshTree(dir));
      expect(hashed?.head).toBe(await gitHead(dir));
    }
  });

  it('reads HEAD from a packed branch ref, and leaves the user index alone', async () => {
    const dir = await repo({ 'a.txt': 'a\n' });
    await git(dir, 'pack-refs', '--all');
    await write(dir, { 'a.txt': 'edited\n', 'b.txt': 'new\n' });
    const snapshots = createGitSnapshots(dir, join(dir, '.allium-loop', 's', 'git-index'));
    expect(await snapshots.head()).toBe(await gitHead(dir));
    await snapshots.workingTree();
    expect(await userIndex(dir)).toEqual({ staged: '', files: 'a.txt' });
  });

  it('hashes a repository without commits, from a subdirectory, and says null outside git', async () => {
    const empty = await tempDir();
    await git(empty, 'init', '-q');
    await write(empty, { 'x.txt': 'x\n' });
    const unborn = createGitSnapshots(empty, join(empty, '.allium-loop', 'r', 'git-index'));
    expect(await unborn.workingTree()).toEqual({ head: null, tree: await freshTree(empty) });
    const made = await unborn.checkpoint('r', 'tick-1');
    expect(made?.ref).toBe('refs/allium-loop/r/tick-1');
    expect(await git(empty, 'rev-parse', `${made?.object ?? ''}^{tree}`)).toBe(await freshTree(empty));

    const dir = await repo({ 'pkg/a.txt': 'a\n', 'other/b.txt': 'b\n' });
    await write(dir, { 'pkg/c.txt': 'c\n', 'other/d.txt': 'd\n' });
    await write(dir, { '.gitignore': '.allium-loop/\n', 'pkg/.allium-loop/r/state.json': '{}' });
    const sub = join(dir, 'pkg');
    const hashed = await createGitSnapshots(sub, join(sub, '.allium-loop', 'r', 'git-index')).workingTree();
    expect(hashed?.tree).toBe(await freshTree(sub));

    const outside = await tempDir();
    const none = createGitSnapshots(outside, join(outside, '.allium-loop', 'r', 'git-index'));
    expect(await none.workingTree()).toBeNull();
    expect(await none.head()).toBeNull();
    expect(await none.checkpoint('r', 'tick-1')).toBeUndefined();
  });

  it('checkpoints the known tree on its HEAD, or the working copy when none is known', async () => {
    const dir = await repo({ 'a.txt': 'a\n' });
    const snapshots = createGitSnapshots(dir, join(dir, '.allium-loop', 'r', 'git-index'));
    await write(dir, { 'a.txt': 'measured\n' });
    const measured = await snapshots.workingTree();
    await write(dir, { 'a.txt': 'edited after the measure\n' });
    const tick = await snapshots.checkpoint('r', 'tick-1', measured ?? undefined);
    expect(await git(dir, 'rev-parse', `${tick?.object ?? ''}^{tree}`)).toBe(measured?.tree);
    expect(await git(dir, 'rev-parse', `${tick?.object ?? ''}^`)).toBe(await gitHead(dir));
    const fresh = await snapshots.checkpoint('r', 'after-last-phase');
    expect(await git(dir, 'rev-parse', `${fresh?.object ?? ''}^{tree}`)).toBe(await freshTree(dir));
    expect(await git(dir, 'rev-parse', 'refs/allium-loop/r/after-last-phase')).toBe(fresh?.object);
    expect(await userIndex(dir)).toEqual({ staged: '', files: 'a.txt' });
    // Nothing changed since: the next checkpoint points at the same commit; an edit makes a new one.
    const same = await snapshots.checkpoint('r', 'tick-2');
    expect(same).toEqual({ ref: 'refs/allium-loop/r/tick-2', object: fresh?.object });
    await write(dir, { 'a.txt': 'edited again\n' });
    const next = await snapshots.checkpoint('r', 'tick-3');
    expect(next?.object).not.toBe(fresh?.object);
    expect(await git(dir, 'rev-parse', `${next?.object ?? ''}^{tree}`)).toBe(await freshTree(dir));
  });

  it('gitWorkingTree and gitCheckpoint give the same answers on their own', async () => {
    const dir = await repo({ 'a.txt': 'a\n' });
    await write(dir, { 'b.txt': 'b\n' });
    expect(await gitWorkingTree(dir)).toBe(await freshTree(dir));
    const made = await gitCheckpoint(dir, 'r', 'tick-2');
    expect(await git(dir, 'rev-parse', `${made?.object ?? ''}^{tree}`)).toBe(await freshTree(dir));
  });
});

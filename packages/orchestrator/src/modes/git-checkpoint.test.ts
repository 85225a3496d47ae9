import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitHead } from '../project/git.js';
import {
  changedPaths,
  createCheckpoint,
  listRefs,
  pathsMatch,
  restoreCheckpoint,
  restorePaths,
  snapshotWorkingTree,
} from './git-checkpoint.js';
import { gitOut, makeGitRepo, writeFiles } from './git-checkpoint.test-helpers.js';

describe('git checkpoints', () => {
  it('hashes content, not stat data: an edit keeping size and mtime (same second) is in the checkpoint', async () => {
    const dir = await makeGitRepo({ 'score.txt': '10\n' });
    // The user's index records score.txt with an mtime well before the index was written (not "racily clean").
    const past = new Date(Date.now() - 3_600_000);
    await utimes(join(dir, 'score.txt'), past, past);
    await gitOut(dir, 'update-index', '--refresh');
    const before = await stat(join(dir, 'score.txt'));
    // The edit keeps the size and mtime the user's index holds, as an edit within the same second can (issue 14.12).
    await writeFile(join(dir, 'score.txt'), '20\n');
    await utimes(join(dir, 'score.txt'), before.atime, before.mtime);
    const scope = { cwd: dir, exclude: [join(dir, '.allium-loop')] };
    const made = await createCheckpoint(scope, 'refs/allium-loop/demo/best', 'best');
    expect(await gitOut(dir, 'show', `${made!.commit}:score.txt`)).toBe('20');
    await writeFile(join(dir, 'score.txt'), '30\n');
    await utimes(join(dir, 'score.txt'), before.atime, before.mtime);
    await restoreCheckpoint(scope, made!.commit);
    expect(await readFile(join(dir, 'score.txt'), 'utf8')).toBe('20\n');
  });

  it('snapshots tracked and untracked files under a ref without touching the branch or the index', async () => {
    const dir = await makeGitRepo({ 'a.txt': 'one\n', '.gitignore': 'ignored.log\n' });
    const head = await gitHead(dir);
    await writeFiles(dir, {
      'a.txt': 'two\n',
      'new/b.txt': 'b\n',
      'ignored.log': 'x',
      '.allium-loop/s.json': '{}',
    });
    const scope = { cwd: dir, exclude: [join(dir, '.allium-loop')] };
    const checkpoint = await createCheckpoint(scope, 'refs/allium-loop/demo/best', 'best');
    expect(checkpoint).toBeDefined();
    expect(await gitOut(dir, 'rev-parse', 'refs/allium-loop/demo/best')).toBe(checkpoint!.commit);
    expect(await gitHead(dir)).toBe(head);
    expect(await gitOut(dir, 'diff', '--cached', '--name-only')).toBe('');
    const files = (await gitOut(dir, 'ls-tree', '-r', '--name-only', checkpoint!.commit)).split('\n');
    expect(files.sort()).toEqual(['.gitignore', 'a.txt', 'new/b.txt']);
  });

  it('restores the working tree: reverts edits, brings back deletions, removes new files', async () => {
    const dir = await makeGitRepo({ 'a.txt': 'one\n', 'keep/c.txt': 'c\n' });
    const scope = { cwd: dir, exclude: [join(dir, '.allium-loop')] };
    await writeFiles(dir, { 'u.txt': 'untracked at checkpoint\n' });
    const best = await createCheckpoint(scope, 'refs/allium-loop/demo/best', 'best');
    await writeFiles(dir, {
      'a.txt': 'broken\n',
      'added/deep/x.txt': 'x\n',
      '.allium-loop/ledger.json': '{"keep":true}',
    });
    await writeFile(join(dir, 'u.txt'), 'changed\n');
    await rm(join(dir, 'keep/c.txt'));
    await restoreCheckpoint(scope, best!.commit);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('one\n');
    expect(await readFile(join(dir, 'u.txt'), 'utf8')).toBe('untracked at checkpoint\n');
    expect(await readFile(join(dir, 'keep/c.txt'), 'utf8')).toBe('c\n');
    expect(existsSync(join(dir, 'added'))).toBe(false);
    expect(await readFile(join(dir, '.allium-loop/ledger.json'), 'utf8')).toBe('{"keep":true}');
    expect(await gitOut(dir, 'status', '--porcelain')).toBe('?? .allium-loop/\n?? u.txt');
  });

  it('leaves the state directory alone even when the user tracks it', async () => {
    const dir = await makeGitRepo({ 'a.txt': 'one\n', '.allium-loop/tracked.json': '{}' });
    const scope = { cwd: dir, exclude: [join(dir, '.allium-loop')] };
    const best = await createCheckpoint(scope, 'refs/allium-loop/demo/best', 'best');
    await writeFiles(dir, { 'a.txt': 'two\n', '.allium-loop/tracked.json': '{"tick":3}' });
    await restoreCheckpoint(scope, best!.commit);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('one\n');
    expect(await readFile(join(dir, '.allium-loop/tracked.json'), 'utf8')).toBe('{"tick":3}');
  });

  it('names the paths that differ between two snapshots, and restores only those', async () => {
    const dir = await makeGitRepo({ 'a.txt': 'one\n', 'gone/d.txt': 'd\n', 'other.txt': 'user\n' });
    const scope = { cwd: dir, exclude: [join(dir, '.allium-loop')] };
    const before = await snapshotWorkingTree(scope, 'before');
    await writeFiles(dir, { 'a.txt': 'agent\n', 'new/deep/x.txt': 'x\n' });
    await rm(join(dir, 'gone/d.txt'));
    const after = await snapshotWorkingTree(scope, 'after');
    const paths = await changedPaths(scope, before!.commit, after!.commit);
    expect(paths.sort()).toEqual(['a.txt', 'gone/d.txt', 'new/deep/x.txt']);
    // Someone else writes other files after the snapshot: a restore of the named paths leaves them alone.
    await writeFiles(dir, { 'other.txt': 'user edited meanwhile\n', 'notes.txt': 'user note\n' });
    await restorePaths(scope, before!.commit, paths);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('one\n');
    expect(await readFile(join(dir, 'gone/d.txt'), 'utf8')).toBe('d\n');
    expect(existsSync(join(dir, 'new'))).toBe(false);
    expect(await readFile(join(dir, 'other.txt'), 'utf8')).toBe('user edited meanwhile\n');
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('user note\n');
    expect(await gitOut(dir, 'diff', '--cached', '--name-only')).toBe('');
    expect(await listRefs(scope, 'refs/allium-loop/')).toEqual(new Map());
  });

  it('restores a file where the tick left a folder, and a folder where it left a file', async () => {
    const dir = await makeGitRepo({ 'p.txt': 'file\n', 'q/inner.txt': 'inner\n' });
    const scope = { cwd: dir, exclude: [] };
    const before = await snapshotWorkingTree(scope, 'before');
    await rm(join(dir, 'p.txt'));
    await writeFiles(dir, { 'p.txt/now-a-folder.txt': 'x\n' });
    await rm(join(dir, 'q'), { recursive: true });
    await writeFile(join(dir, 'q'), 'now a file\n');
    const after = await snapshotWorkingTree(scope, 'after');
    await restorePaths(scope, before!.commit, await changedPaths(scope, before!.commit, after!.commit));
    expect(await readFile(join(dir, 'p.txt'), 'utf8')).toBe('file\n');
    expect(await readFile(join(dir, 'q/inner.txt'), 'utf8')).toBe('inner\n');
  });

  it('tells whether named paths still hold what a snapshot recorded (content, presence), hashing only those', async () => {
    const dir = await makeGitRepo({ 'a.txt': 'one\n', 'b.txt': 'two\n' });
    const scope = { cwd: dir, exclude: [] };
    await writeFiles(dir, { 'new.txt': 'new\n' });
    const snap = await snapshotWorkingTree(scope, 'snap');
    expect(await pathsMatch(scope, snap!.commit, ['a.txt', 'new.txt', 'never.txt'])).toBe(true);
    await writeFiles(dir, { 'b.txt': 'changed\n' });
    expect(await pathsMatch(scope, snap!.commit, ['a.txt', 'new.txt'])).toBe(true);
    expect(await pathsMatch(scope, snap!.commit, ['a.txt', 'b.txt'])).toBe(false);
    await rm(join(dir, 'new.txt'));
    expect(await pathsMatch(scope, snap!.commit, ['new.txt'])).toBe(false);
    await writeFiles(dir, { 'never.txt': 'appeared\n' });
    expect(await pathsMatch(scope, snap!.commit, ['never.txt'])).toBe(false);
  });

  it('returns undefined outside a git work tree', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-nogit-'));
    expect(await createCheckpoint({ cwd: dir, exclude: [] }, 'refs/allium-loop/x/best', 'x')).toBeUndefined();
    expect(await gitHead(dir)).toBeNull();
  });
});

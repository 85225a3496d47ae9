import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gitOut, makeGitRepo, writeFiles } from '../modes/git-checkpoint.test-helpers.js';
import { createGitSnapshots, gitHead } from './git.js';

/** A run's git session on `cwd`, covering the whole work tree as the loop modes use it. */
function session(cwd: string) {
  return createGitSnapshots(cwd, join(cwd, '.allium-loop', 'run', 'git-index'), { cover: 'repository' });
}

describe('git snapshots and path restores (the loop modes)', () => {
  it('hashes content, not stat data: an edit keeping size and mtime (same second) is in the snapshot', async () => {
    const dir = await makeGitRepo({ 'score.txt': '10\n' });
    // The user's index records score.txt with an mtime well before the index was written (not "racily clean").
    const past = new Date(Date.now() - 3_600_000);
    await utimes(join(dir, 'score.txt'), past, past);
    await gitOut(dir, 'update-index', '--refresh');
    const before = await stat(join(dir, 'score.txt'));
    // The edit keeps the size and mtime the user's index holds, as an edit within the same second can (issue 14.12).
    await writeFile(join(dir, 'score.txt'), '20\n');
    await utimes(join(dir, 'score.txt'), before.atime, before.mtime);
    const git = session(dir);
    const made = await git.checkpoint('demo', 'best');
    expect(await gitOut(dir, 'show', `${made!.object}:score.txt`)).toBe('20');
    await writeFile(join(dir, 'score.txt'), '30\n');
    await utimes(join(dir, 'score.txt'), before.atime, before.mtime);
    const now = await git.snapshot('now');
    expect(await gitOut(dir, 'show', `${now!.object}:score.txt`)).toBe('30');
    await git.restorePaths(made!.object, await git.changedPaths(made!.object, now!.object));
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
    const checkpoint = await session(dir).checkpoint('demo', 'best');
    expect(checkpoint?.ref).toBe('refs/allium-loop/demo/best');
    expect(await gitOut(dir, 'rev-parse', 'refs/allium-loop/demo/best')).toBe(checkpoint!.object);
    expect(await gitOut(dir, 'rev-parse', `${checkpoint!.object}^`)).toBe(head);
    expect(await gitHead(dir)).toBe(head);
    expect(await gitOut(dir, 'diff', '--cached', '--name-only')).toBe('');
    const files = (await gitOut(dir, 'ls-tree', '-r', '--name-only', checkpoint!.object)).split('\n');
    expect(files.sort()).toEqual(['.gitignore', 'a.txt', 'new/b.txt']);
  });

  it('covers the whole work tree from a sub-folder, or only the folder, leaving out the state directory and named paths', async () => {
    const dir = await makeGitRepo({
      'pkg/a.txt': 'a\n',
      'other/b.txt': 'b\n',
      'pkg/.allium-loop/t.json': '{}',
    });
    await writeFiles(dir, {
      'pkg/a.txt': 'a2\n',
      'other/b.txt': 'b2\n',
      'pkg/prd.json': '{}',
      'pkg/.allium-loop/t.json': '{"tick":3}',
    });
    const sub = join(dir, 'pkg');
    const whole = await session(sub).snapshot('whole', { leaveOut: [join(sub, 'prd.json')] });
    const show = (object: string, path: string) => gitOut(dir, 'show', `${object}:${path}`);
    expect(await show(whole!.object, 'other/b.txt')).toBe('b2');
    expect(await show(whole!.object, 'pkg/a.txt')).toBe('a2');
    const listed = await gitOut(dir, 'ls-tree', '-r', '--name-only', whole!.object);
    expect(listed.split('\n').sort()).toEqual(['other/b.txt', 'pkg/a.txt']);
    const folder = await createGitSnapshots(sub, join(sub, '.allium-loop', 'r', 'git-index')).snapshot('f');
    expect(await show(folder!.object, 'other/b.txt')).toBe('b');
    expect(await show(folder!.object, 'pkg/prd.json')).toBe('{}');
  });

  it('names the paths that differ between two snapshots, and restores only those', async () => {
    const dir = await makeGitRepo({ 'a.txt': 'one\n', 'gone/d.txt': 'd\n', 'other.txt': 'user\n' });
    const git = session(dir);
    const before = await git.snapshot('before');
    await writeFiles(dir, { 'a.txt': 'agent\n', 'new/deep/x.txt': 'x\n', '.allium-loop/ledger.json': '{}' });
    await rm(join(dir, 'gone/d.txt'));
    const after = await git.snapshot('after');
    const paths = await git.changedPaths(before!.object, after!.object);
    expect(paths.sort()).toEqual(['a.txt', 'gone/d.txt', 'new/deep/x.txt']);
    // Someone else writes other files after the snapshot: a restore of the named paths leaves them alone.
    await writeFiles(dir, { 'other.txt': 'user edited meanwhile\n', 'notes.txt': 'user note\n' });
    await git.restorePaths(before!.object, paths);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('one\n');
    expect(await readFile(join(dir, 'gone/d.txt'), 'utf8')).toBe('d\n');
    expect(existsSync(join(dir, 'new'))).toBe(false);
    expect(await readFile(join(dir, 'other.txt'), 'utf8')).toBe('user edited meanwhile\n');
    expect(await readFile(join(dir, 'notes.txt'), 'utf8')).toBe('user note\n');
    expect(await readFile(join(dir, '.allium-loop/ledger.json'), 'utf8')).toBe('{}');
    expect(await gitOut(dir, 'diff', '--cached', '--name-only')).toBe('');
    expect(await git.listRefs('refs/allium-loop/')).toEqual(new Map());
  });

  it('restores a file where the tick left a folder, and a folder where it left a file', async () => {
    const dir = await makeGitRepo({ 'p.txt': 'file\n', 'q/inner.txt': 'inner\n' });
    const git = session(dir);
    const before = await git.snapshot('before');
    await rm(join(dir, 'p.txt'));
    await writeFiles(dir, { 'p.txt/now-a-folder.txt': 'x\n' });
    await rm(join(dir, 'q'), { recursive: true });
    await writeFile(join(dir, 'q'), 'now a file\n');
    const after = await git.snapshot('after');
    await git.restorePaths(before!.object, await git.changedPaths(before!.object, after!.object));
    expect(await readFile(join(dir, 'p.txt'), 'utf8')).toBe('file\n');
    expect(await readFile(join(dir, 'q/inner.txt'), 'utf8')).toBe('inner\n');
  });

  it('tells whether named paths still hold what a snapshot recorded (content, presence), hashing only those', async () => {
    const dir = await makeGitRepo({ 'a.txt': 'one\n', 'b.txt': 'two\n' });
    const git = session(dir);
    await writeFiles(dir, { 'new.txt': 'new\n' });
    const snap = await git.snapshot('snap');
    expect(await git.pathsMatch(snap!.object, ['a.txt', 'new.txt', 'never.txt'])).toBe(true);
    await writeFiles(dir, { 'b.txt': 'changed\n' });
    expect(await git.pathsMatch(snap!.object, ['a.txt', 'new.txt'])).toBe(true);
    expect(await git.pathsMatch(snap!.object, ['a.txt', 'b.txt'])).toBe(false);
    await rm(join(dir, 'new.txt'));
    expect(await git.pathsMatch(snap!.object, ['new.txt'])).toBe(false);
    await writeFiles(dir, { 'never.txt': 'appeared\n' });
    expect(await git.pathsMatch(snap!.object, ['never.txt'])).toBe(false);
  });

  it('moves refs and the branch only, and says what outside git', async () => {
    const dir = await makeGitRepo({ 'a.txt': 'a\n' });
    const git = session(dir);
    const first = await gitHead(dir);
    await writeFiles(dir, { 'a.txt': 'b\n' });
    const snap = await git.snapshot('next');
    expect(await git.commitExists(snap!.object)).toBe(true);
    expect(await git.commitExists('0'.repeat(40))).toBe(false);
    await git.moveBranch(snap!.object);
    expect(await gitHead(dir)).toBe(snap!.object);
    expect(await git.head()).toBe(snap!.object);
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('b\n');
    await git.pointRef('refs/allium-loop/demo/first', first!);
    expect(await git.listRefs('refs/allium-loop/demo/')).toEqual(
      new Map([['refs/allium-loop/demo/first', first]]),
    );
    await git.deleteRef('refs/allium-loop/demo/first');
    expect(await git.listRefs('refs/allium-loop/demo/')).toEqual(new Map());

    const outside = await mkdtemp(join(tmpdir(), 'allium-loop-nogit-'));
    const none = session(outside);
    expect(await none.snapshot('x')).toBeUndefined();
    expect(await none.checkpoint('x', 'best')).toBeUndefined();
    expect(await none.top()).toBeNull();
    await expect(none.pointRef('refs/allium-loop/x/best', first!)).rejects.toMatchObject({
      code: 'git.not_a_work_tree',
    });
  });

  it('writes a checkpoint ref only when it names another commit; refs the session moves or deletes are written again', async () => {
    const dir = await makeGitRepo({ 'a.txt': 'a\n' });
    const git = session(dir);
    const ref = 'refs/allium-loop/r/after-last-phase';
    const first = await git.checkpoint('r', 'after-last-phase');
    expect(await git.checkpoint('r', 'after-last-phase')).toEqual(first);
    expect(await gitOut(dir, 'rev-parse', ref)).toBe(first!.object);
    const head = (await gitHead(dir))!;
    await git.pointRef(ref, head);
    expect(await git.checkpoint('r', 'after-last-phase')).toEqual(first);
    expect(await gitOut(dir, 'rev-parse', ref)).toBe(first!.object);
    await git.deleteRef(ref);
    await git.checkpoint('r', 'after-last-phase');
    expect(await gitOut(dir, 'rev-parse', ref)).toBe(first!.object);
    await writeFiles(dir, { 'a.txt': 'edited\n' });
    const next = await git.checkpoint('r', 'after-last-phase');
    expect(next!.object).not.toBe(first!.object);
    expect(await gitOut(dir, 'rev-parse', ref)).toBe(next!.object);
  });
});

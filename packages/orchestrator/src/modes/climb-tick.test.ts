import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { climbRefs, expectedRefs, openTick, restoreMovedRefs, revertTick, tickEdits } from './climb-tick.js';
import { createGitSnapshots } from '../project/git.js';
import { gitOut, makeGitRepo, writeFiles } from './git-checkpoint.test-helpers.js';

describe('hill-climb ticks', () => {
  it("a revert undoes only the tick's own edits: the user's edit of the same file before the tick and a log written after the call stay", async () => {
    const dir = await makeGitRepo({ 'score.txt': '10\n', 'src.txt': 'line\n' });
    const git = createGitSnapshots(dir, join(dir, '.allium-loop', 'demo', 'git-index'), {
      cover: 'repository',
    });
    const best = await git.checkpoint('demo', 'best');
    await writeFiles(dir, { 'src.txt': 'line\nthe user adds a line between ticks\n' });
    const open = (await openTick(git, 'demo', 1, best!.object))!;
    expect(await gitOut(dir, 'rev-parse', climbRefs('demo').pending)).toBe(open.before);
    await writeFiles(dir, {
      'score.txt': '5\n',
      'src.txt': 'rewritten by the agent\n',
      'junk.txt': 'junk\n',
    });
    const edits = await tickEdits(git, 'demo', open);
    expect([...edits.paths].sort()).toEqual(['junk.txt', 'score.txt', 'src.txt']);
    await writeFiles(dir, {
      'bench.log': 'written by the verify command\n',
      'score.txt': '5\nthe user edits this while the verify command runs\n',
    });
    await revertTick(git, 'demo', open, edits);
    expect(await readFile(join(dir, 'score.txt'), 'utf8')).toBe('10\n');
    expect(await readFile(join(dir, 'src.txt'), 'utf8')).toBe('line\nthe user adds a line between ticks\n');
    expect(existsSync(join(dir, 'junk.txt'))).toBe(false);
    expect(await readFile(join(dir, 'bench.log'), 'utf8')).toBe('written by the verify command\n');
    expect(await gitOut(dir, 'show', `${climbRefs('demo').reverted(1)}:src.txt`)).toBe(
      'rewritten by the agent',
    );
    // An edit made to a touched path after the call is not lost: the reverted ref holds the tree as it was.
    expect(await gitOut(dir, 'show', `${climbRefs('demo').reverted(1)}:score.txt`)).toBe(
      '5\nthe user edits this while the verify command runs',
    );
  });

  it('puts back refs that do not name what the ledger recorded (moved or deleted), and reports each', async () => {
    const dir = await makeGitRepo({ 'a.txt': 'a\n' });
    const git = createGitSnapshots(dir, join(dir, '.allium-loop', 'demo', 'git-index'), {
      cover: 'repository',
    });
    const refs = climbRefs('demo');
    const tick0 = await git.checkpoint('demo', 'tick-0');
    await writeFiles(dir, { 'a.txt': 'b\n' });
    const tick1 = await git.checkpoint('demo', 'tick-1');
    await gitOut(dir, 'update-ref', refs.best, tick1!.object);
    const at = new Date().toISOString();
    const expected = expectedRefs(
      {
        slug: 'demo',
        checkpoints: [
          { tick: 0, ref: refs.tick(0), object: tick0!.object, at },
          { tick: 1, ref: refs.tick(1), object: tick1!.object, at },
        ],
      },
      tick1!.object,
      null,
    );
    expect(await restoreMovedRefs(git, refs.prefix, expected)).toEqual([]);
    const head = await gitOut(dir, 'rev-parse', 'HEAD');
    await gitOut(dir, 'update-ref', refs.best, head);
    await gitOut(dir, 'update-ref', '-d', refs.tick(0));
    const moves = await restoreMovedRefs(git, refs.prefix, expected);
    expect(moves).toEqual([
      { ref: refs.tick(0), expected: tick0!.object, found: null },
      { ref: refs.best, expected: tick1!.object, found: head },
    ]);
    const now = await git.listRefs(refs.prefix);
    expect(now.get(refs.best)).toBe(tick1!.object);
    expect(now.get(refs.tick(0))).toBe(tick0!.object);
    // A pending ref left by a process killed around a tick's opening or closing: with no open tick it goes, unreported;
    // while the ledger has a tick open it is kept.
    await gitOut(dir, 'update-ref', refs.pending, head);
    expect(await restoreMovedRefs(git, refs.prefix, expected)).toEqual([]);
    expect((await git.listRefs(refs.prefix)).has(refs.pending)).toBe(false);
    const open = { tick: 2, before: head };
    await gitOut(dir, 'update-ref', refs.pending, head);
    expect(
      await restoreMovedRefs(git, refs.prefix, expectedRefs({ slug: 'demo', checkpoints: [] }, null, open)),
    ).toEqual([]);
    expect((await git.listRefs(refs.prefix)).get(refs.pending)).toBe(head);
  });
});

import { open, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createGitSnapshots } from '../project/git.js';
import { makeGitRepo, writeFiles } from './git-checkpoint.test-helpers.js';
import { engineOutputFiles, touchedPaths } from './touched-paths.js';

describe('touchedPaths', () => {
  it("names what changed between the snapshots around the agent's call, not edits made before or after it", async () => {
    const dir = await makeGitRepo({ 'code.js': 'v1\n', 'README.md': 'readme\n' });
    const git = createGitSnapshots(dir, join(dir, '.allium-loop', 'r', 'git-index'), { cover: 'repository' });
    await writeFiles(dir, { 'README.md': 'the user edits this before the tick\n' });
    const before = await git.snapshot('before');
    await writeFiles(dir, {
      'code.js': 'v2 by the agent\n',
      'added.js': 'new\n',
      '.allium-loop/x.json': '{}',
    });
    const after = await git.snapshot('after');
    await writeFiles(dir, { 'notes.txt': 'the user writes this after the call\n' });
    expect((await touchedPaths(git, before!.object, after!.object, [])).sort()).toEqual([
      'added.js',
      'code.js',
    ]);
  });

  it("leaves out the engine's own output file (a log redirected into the repository), known by its inode", async () => {
    const dir = await makeGitRepo({ 'code.js': 'v1\n' });
    const git = createGitSnapshots(dir, join(dir, '.allium-loop', 'r', 'git-index'), { cover: 'repository' });
    const log = await open(join(dir, 'run.log'), 'a');
    try {
      await log.write('→ baseline\n');
      const before = await git.snapshot('before');
      await log.write('→ tick 1: agent step\n');
      await writeFile(join(dir, 'code.js'), 'v2\n');
      const after = await git.snapshot('after');
      const outputs = engineOutputFiles([log.fd]);
      expect(outputs).toHaveLength(1);
      expect(await touchedPaths(git, before!.object, after!.object, outputs)).toEqual(['code.js']);
      expect((await touchedPaths(git, before!.object, after!.object, [])).sort()).toEqual([
        'code.js',
        'run.log',
      ]);
    } finally {
      await log.close();
    }
    expect(await readFile(join(dir, 'run.log'), 'utf8')).toContain('tick 1');
  });

  it('knows no output file for a descriptor that is not a regular file or not open', () => {
    expect(engineOutputFiles([987_654])).toEqual([]);
  });
});

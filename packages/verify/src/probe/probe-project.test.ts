import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AlliumLoopError } from '@allium-loop/errors';
import { describe, expect, it } from 'vitest';
import { findSpecFiles, probeProject, walkProject } from './index.js';

async function project(files: readonly string[]): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'verify-probe-'));
  for (const file of files) {
    await mkdir(dirname(join(root, file)), { recursive: true });
    await writeFile(join(root, file), 'x\n');
  }
  return root;
}

describe('probeProject on real directories', () => {
  it('finds nothing in an empty directory', async () => {
    const probe = await probeProject({ cwd: await project([]), hasTestCommand: false });
    expect(probe).toEqual({
      specFiles: [],
      hasCode: false,
      hasTestCommand: false,
      codeSample: [],
      unreadable: [],
    });
  });

  it('finds specs at any depth but not in dependencies, VCS data or build output', async () => {
    const cwd = await project([
      'billing.allium',
      'spec/orders/orders.allium',
      'node_modules/lib/lib.allium',
      '.git/x.allium',
      'dist/copy.allium',
      'build/copy.allium',
      'notes.txt',
    ]);
    const probe = await probeProject({ cwd, hasTestCommand: true });
    expect(probe.specFiles).toEqual(['billing.allium', 'spec/orders/orders.allium']);
    expect(probe.hasCode).toBe(false);
    expect(probe.hasTestCommand).toBe(true);
  });

  it('does not count tests, docs, config or specs as code', async () => {
    const cwd = await project([
      'src/app.test.ts',
      'tests/test_billing.py',
      '__tests__/a.js',
      'docs/example.ts',
      'vitest.config.ts',
      '.eslintrc.cjs',
      'README.md',
      'orders.allium',
      'node_modules/pkg/index.js',
    ]);
    expect((await probeProject({ cwd, hasTestCommand: false })).hasCode).toBe(false);
  });

  it('counts real source files as code and shows a sample', async () => {
    const cwd = await project([
      'src/billing/invoice.ts',
      'app/models/order.rb',
      'main.go',
      'src/billing/invoice.test.ts',
    ]);
    const probe = await probeProject({ cwd, hasTestCommand: false });
    expect(probe.hasCode).toBe(true);
    expect(probe.codeSample).toEqual(['app/models/order.rb', 'main.go', 'src/billing/invoice.ts']);
  });

  it('honours configured spec globs and asks the test-command callback', async () => {
    const cwd = await project(['specs/a.allium', 'other/b.allium', 'specs/c.spec.allium']);
    let asked = 0;
    const probe = await probeProject({
      cwd,
      specGlobs: ['specs/*.allium'],
      hasTestCommand: async () => {
        asked += 1;
        return true;
      },
    });
    expect(probe.specFiles).toEqual(['specs/a.allium', 'specs/c.spec.allium']);
    expect(probe.hasTestCommand).toBe(true);
    expect(asked).toBe(1);
    expect(await findSpecFiles(cwd, ['**/{a,b}.allium'])).toEqual(['other/b.allium', 'specs/a.allium']);
  });

  it('does not follow symbolic links (no loops, no specs from elsewhere)', async () => {
    const outside = await project(['far.allium']);
    const cwd = await project(['here.allium']);
    await symlink(outside, join(cwd, 'linked'));
    await symlink(cwd, join(cwd, 'loop'));
    expect((await probeProject({ cwd, hasTestCommand: false })).specFiles).toEqual(['here.allium']);
  });

  it('skips an unreadable subdirectory and fails clearly on an unreadable root', async () => {
    const cwd = await project(['ok.allium', 'locked/x.allium']);
    await chmod(join(cwd, 'locked'), 0o000);
    try {
      const probe = await probeProject({ cwd, hasTestCommand: false });
      // Root ignores permissions, so only check the skip when the directory really was unreadable.
      if (probe.unreadable.length > 0) expect(probe.unreadable).toEqual(['locked']);
      expect(probe.specFiles).toContain('ok.allium');
    } finally {
      await chmod(join(cwd, 'locked'), 0o755);
    }
    const missing = join(cwd, 'does-not-exist');
    const failure = await probeProject({ cwd: missing, hasTestCommand: false }).catch(
      (error: unknown) => error,
    );
    expect(AlliumLoopError.is(failure) && failure.code).toBe('verify.probe_failed');
  });
});

describe('walkProject orders', () => {
  it('sorts by default; `directory` lists depth first in the order the file system gives (what `ls -U` shows)', async () => {
    const names = ['zeta', 'alpha', 'mid', 'beta', 'omega', 'kappa'];
    const root = await project([
      ...names.map((n) => `${n}.txt`),
      'sub/b.txt',
      'sub/a.txt',
      'node_modules/x.txt',
    ]);
    const sorted = await walkProject(root, { skip: new Set() });
    expect(sorted.files).toEqual([...sorted.files].sort());
    // An independent oracle for readdir(3)'s order: `ls -U` (unsorted), a folder's files where the folder is listed.
    const listed = (folder: string): string[] =>
      execFileSync('ls', ['-U', '-A', join(root, folder)], { encoding: 'utf8' })
        .split('\n')
        .filter((name) => name !== '')
        .flatMap((name) => {
          const path = folder === '' ? name : `${folder}/${name}`;
          return name === 'sub' || name === 'node_modules' ? listed(path) : [path];
        });
    const inOrder = await walkProject(root, { skip: new Set(), order: 'directory' });
    expect(inOrder.files).toEqual(listed(''));
    expect([...inOrder.files].sort()).toEqual(sorted.files);
  });
});

describe('walkProject with followLinks', () => {
  it('takes links for what they lead to, as the reference checker does, and never goes round a loop', async () => {
    const outside = await project(['far.txt', 'deeper/farther.txt']);
    const root = await project(['here.txt', 'sub/inner.txt', 'node_modules/dep.txt']);
    await symlink(outside, join(root, 'far-away')); // a folder elsewhere: searched
    await symlink('far-away', join(root, 'far-away2')); // a link to that link: searched again, under its own name
    await symlink('here.txt', join(root, 'alias.txt')); // a file: listed
    await symlink('gone.txt', join(root, 'broken.txt')); // leads nowhere: listed (the caller cannot read it)
    await symlink('..', join(root, 'sub', 'up')); // back to the root the walk is inside of: a loop, not followed
    await symlink(root, join(outside, 'deeper', 'home')); // back to the root through the linked folder: not followed
    await symlink('..', join(root, 'node_modules', 'loop')); // inside a skipped folder: never reached
    await symlink('sub', join(root, 'node_modules-link')); // a folder that is a sibling's twin: searched
    const walk = await walkProject(root, { followLinks: true });
    expect(walk.files).toEqual([
      'alias.txt',
      'broken.txt',
      'far-away/deeper/farther.txt',
      'far-away/far.txt',
      'far-away2/deeper/farther.txt',
      'far-away2/far.txt',
      'here.txt',
      'node_modules-link/inner.txt',
      'sub/inner.txt',
    ]);
    expect(walk.unreadable).toEqual([]);
    // A skipped name is skipped as a link too.
    await symlink(outside, join(root, 'node_modules', 'linked'));
    await symlink(outside, join(root, '.git'));
    expect((await walkProject(root, { followLinks: true })).files).toEqual(walk.files);
    // Without the option no link is listed or followed.
    expect((await walkProject(root)).files).toEqual(['here.txt', 'sub/inner.txt']);
  });

  it('ends on a link to the root itself given through a link, and on links that point at each other', async () => {
    const root = await project(['a/x.txt', 'b/y.txt']);
    await symlink('../b', join(root, 'a', 'to-b'));
    await symlink('../a', join(root, 'b', 'to-a'));
    const through = `${root}-link`;
    await symlink(root, through);
    await symlink(through, join(root, 'b', 'home'));
    const walk = await walkProject(through, { followLinks: true, order: 'sorted' });
    expect(walk.files).toEqual(['a/to-b/y.txt', 'a/x.txt', 'b/to-a/x.txt', 'b/y.txt']);
  });

  it('stops following links that fan out past its limit, and says where', async () => {
    // Each level holds two links to the next: 2 + 4 + 8 + 16 folders reached through links.
    const root = await project(['level4/end.txt']);
    for (let level = 0; level < 4; level += 1) {
      await mkdir(join(root, `level${level}`), { recursive: true });
      for (const name of ['x', 'y']) await symlink(`../level${level + 1}`, join(root, `level${level}`, name));
    }
    const all = await walkProject(join(root, 'level0'), { followLinks: true });
    expect(all.files).toHaveLength(16);
    expect(all.linkLimitAt).toBeUndefined();
    const capped = await walkProject(join(root, 'level0'), { followLinks: true, followedLinksLimit: 5 });
    expect(capped.linkLimitAt).toBeDefined();
    expect(capped.files.length).toBeLessThan(16);
    expect(capped.files.every((file) => file.endsWith('/end.txt'))).toBe(true);
  });

  it('makes every file-system call synchronously: the walk is over before the event loop turns once', async () => {
    // Each asynchronous call would be a hand-off to libuv's thread pool and back, which a busy machine makes wait:
    // links fanning out to 10,000 folders took over 120 s in a busy CI run so. Speed-independent: counted in turns.
    const root = await project(['level3/end.txt', 'level0/own/deeper/file.txt']);
    for (let level = 0; level < 3; level += 1) {
      await mkdir(join(root, `level${level}`), { recursive: true });
      for (const name of ['x', 'y']) await symlink(`../level${level + 1}`, join(root, `level${level}`, name));
    }
    const turned = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    for (const order of ['sorted', 'directory'] as const) {
      let over = false;
      const walk = walkProject(join(root, 'level0'), { followLinks: true, order }).finally(() => {
        over = true;
      });
      await turned();
      expect(over).toBe(true);
      expect((await walk).files).toHaveLength(9);
    }
    // The engine's own walks (no link followed) stay asynchronous: a run's other work goes on while a big tree is read.
    let over = false;
    const walk = walkProject(root).finally(() => {
      over = true;
    });
    await turned();
    expect(over).toBe(false);
    expect((await walk).files).toEqual(['level0/own/deeper/file.txt', 'level3/end.txt']);
  });
});

import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensureGitIgnored, GITIGNORE_ENTRY } from './ensure-git-ignored.js';
import { compileChildren } from './test-children/compile-children.test-helpers.js';

const run = promisify(execFile);

describe('ensureGitIgnored (real git in temp repositories)', () => {
  let base: string;
  let env: NodeJS.ProcessEnv;

  const git = (cwd: string, ...args: string[]) => run('git', args, { cwd, env });
  const initRepo = async (dir: string): Promise<string> => {
    await mkdir(dir, { recursive: true });
    await git(dir, 'init', '-q');
    return dir;
  };
  const isIgnored = async (cwd: string, path: string): Promise<boolean> =>
    git(cwd, 'check-ignore', '-q', '--no-index', path).then(
      () => true,
      () => false,
    );

  beforeEach(async () => {
    base = await mkdtemp(join(tmpdir(), 'ledger-gitignore-'));
    const globalConfig = join(base, 'gitconfig');
    await writeFile(globalConfig, '');
    env = {
      ...process.env,
      HOME: base,
      GIT_CONFIG_GLOBAL: globalConfig,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CEILING_DIRECTORIES: base,
    };
  });
  afterEach(async () => {
    await rm(base, { recursive: true, force: true });
  });

  it('creates .gitignore when there is none, then is a no-op', async () => {
    const repo = await initRepo(join(base, 'repo'));
    expect(await ensureGitIgnored(repo, { env })).toEqual({
      kind: 'created',
      root: repo,
      file: join(repo, '.gitignore'),
    });
    expect(await readFile(join(repo, '.gitignore'), 'utf8')).toContain(`${GITIGNORE_ENTRY}\n`);
    expect(await isIgnored(repo, '.allium-loop/x.json')).toBe(true);
    expect(await ensureGitIgnored(repo, { env })).toEqual({ kind: 'already_ignored', root: repo });
  });

  it('appends the entry on a line of its own to a .gitignore without it', async () => {
    const repo = await initRepo(join(base, 'repo'));
    await writeFile(join(repo, '.gitignore'), 'node_modules');
    expect((await ensureGitIgnored(repo, { env })).kind).toBe('appended');
    expect(await readFile(join(repo, '.gitignore'), 'utf8')).toBe(`node_modules\n${GITIGNORE_ENTRY}\n`);
  });

  it.each([
    ['directly', '.allium-loop/\n'],
    ['with a glob', '.allium-*\n'],
  ])('leaves a .gitignore that already ignores it %s untouched', async (_how, content) => {
    const repo = await initRepo(join(base, 'repo'));
    await writeFile(join(repo, '.gitignore'), content);
    expect(await ensureGitIgnored(repo, { env })).toEqual({ kind: 'already_ignored', root: repo });
    expect(await readFile(join(repo, '.gitignore'), 'utf8')).toBe(content);
  });

  it('sees a parent-directory pattern and writes at the repository root otherwise', async () => {
    const repo = await initRepo(join(base, 'repo'));
    const project = join(repo, 'apps', 'web');
    await mkdir(project, { recursive: true });
    await writeFile(join(repo, '.gitignore'), 'apps/\n');
    expect(await ensureGitIgnored(project, { env })).toEqual({ kind: 'already_ignored', root: repo });
    await writeFile(join(repo, '.gitignore'), 'dist/\n');
    expect((await ensureGitIgnored(project, { env })).kind).toBe('appended');
    expect(await readFile(join(repo, '.gitignore'), 'utf8')).toBe(`dist/\n${GITIGNORE_ENTRY}\n`);
    expect(await isIgnored(repo, 'apps/web/.allium-loop/x.json')).toBe(true);
  });

  it('honours core.excludesFile and does not create a .gitignore', async () => {
    const repo = await initRepo(join(base, 'repo'));
    const excludes = join(base, 'global-excludes');
    await writeFile(excludes, '.allium-loop/\n');
    await git(repo, 'config', 'core.excludesFile', excludes);
    expect(await ensureGitIgnored(repo, { env })).toEqual({ kind: 'already_ignored', root: repo });
    await expect(readFile(join(repo, '.gitignore'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('does nothing outside a git repository', async () => {
    const plain = join(base, 'plain');
    await mkdir(plain);
    expect((await ensureGitIgnored(plain, { env })).kind).toBe('not_a_repo');
    await expect(readFile(join(plain, '.gitignore'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('uses the nearest enclosing repository of a nested repo', async () => {
    const outer = await initRepo(join(base, 'outer'));
    const inner = await initRepo(join(outer, 'vendor', 'inner'));
    const project = join(inner, 'pkg');
    await mkdir(project);
    expect(await ensureGitIgnored(project, { env })).toMatchObject({ kind: 'created', root: inner });
    await expect(readFile(join(outer, '.gitignore'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('continues with a warning when .gitignore is read-only, and leaves it unchanged', async () => {
    const repo = await initRepo(join(base, 'repo'));
    const file = join(repo, '.gitignore');
    await writeFile(file, 'node_modules\n');
    await chmod(file, 0o444);
    const outcome = await ensureAsUnprivileged(repo, base, env);
    expect(outcome).toMatchObject({ kind: 'unwritable', root: repo, file });
    expect(String(outcome['warning'])).toMatch(
      /Could not add \.allium-loop\/ to .*\.gitignore \(EACCES\).*Continuing/,
    );
    expect(await readFile(file, 'utf8')).toBe('node_modules\n');
  });
});

/**
 * Runs `ensureGitIgnored` in a child process. Root ignores file modes, so when the tests run as root the child
 * runs as `nobody` (uid 65534) over a tree opened up for it; otherwise it runs as the current user.
 */
async function ensureAsUnprivileged(
  repo: string,
  base: string,
  env: NodeJS.ProcessEnv,
): Promise<Record<string, unknown>> {
  // The child may run as another user (below), who cannot always reach this checkout (a clone under a private
  // directory, as `mktemp -d` makes them): it runs from a copy of the transpiled sources in the test's own directory.
  const children = join(base, 'children');
  await cp(dirname(await compileChildren()), children, { recursive: true });
  await writeFile(join(children, 'package.json'), '{ "type": "module" }\n');
  const script = join(children, 'ledger', 'test-children/gitignore-child.test-helpers.js');
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    await chmod(base, 0o755);
    await run('chmod', ['-R', 'a+rX', base]);
  }
  const childEnv = {
    ...env,
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'safe.directory',
    GIT_CONFIG_VALUE_0: '*',
  };
  const { stdout } = await run(process.execPath, [script, repo], {
    env: childEnv,
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

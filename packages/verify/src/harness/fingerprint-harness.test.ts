import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyHarnessRestore, checkHarness } from './check-harness.js';
import { splitCommandLine } from './command-words.js';
import { fingerprintHarness } from './fingerprint-harness.js';
import { latestHarnessRecord, loadHarnessRecord, saveHarnessRecord } from './harness-store.js';

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'harness-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

const labels = async (dir: string, command: string, env: Record<string, string> = {}) =>
  (await fingerprintHarness({ cwd: dir, commands: [command], env })).entries.map((e) => e.label);

/** Fingerprints, applies `edit`, checks; returns the changed labels and restores. */
async function change(
  files: Record<string, string>,
  command: string,
  edit: Record<string, string | null>,
  env: Record<string, string> = {},
) {
  const dir = await project(files);
  const record = await fingerprintHarness({ cwd: dir, commands: [command], env });
  for (const [path, text] of Object.entries(edit)) {
    if (text === null) await rm(join(dir, path));
    else {
      await mkdir(dirname(join(dir, path)), { recursive: true });
      await writeFile(join(dir, path), text);
    }
  }
  const check = await checkHarness(dir, record);
  await applyHarnessRestore(dir, check.restore);
  const after = await checkHarness(dir, record);
  return { dir, changed: check.changed.map((e) => e.label), after: after.changed.length };
}

describe('splitCommandLine', () => {
  it('reads assignments, prefixes, sources and substitutions', () => {
    expect(splitCommandLine('PATH=./bin:$PATH CI=1 check --fast && . ./env.sh; npx vitest run')).toEqual([
      { assignments: { PATH: './bin:$PATH', CI: '1' }, program: 'check', args: ['--fast'] },
      { assignments: {}, program: '.', args: ['./env.sh'] },
      { assignments: {}, program: 'vitest', args: ['run'] },
    ]);
    expect(splitCommandLine('export PATH="tools:$PATH"')[0]).toEqual({
      assignments: { PATH: 'tools:$PATH' },
      program: undefined,
      args: [],
    });
  });
});

describe('fingerprintHarness: what the engine runs is fingerprinted', () => {
  it('the npm test script, its hooks, the file it names and allium-loop.yaml', async () => {
    const dir = await project({
      'allium-loop.yaml': 'testCommand: npm test\n',
      'package.json': JSON.stringify({ scripts: { test: 'node scripts/run-tests.mjs' }, dependencies: {} }),
      'scripts/run-tests.mjs': "import { helper } from './helper.mjs';\nimport '../src/app.js';\n",
      'scripts/helper.mjs': 'export const helper = 1;\n',
      'src/app.js': 'export {};\n',
    });
    expect(await labels(dir, 'npm run -s test -- --reporter=dot')).toEqual(await labels(dir, 'npm test'));
    expect(await labels(dir, 'npm test')).toEqual([
      'allium-loop.yaml',
      'package.json scripts.pretest',
      'package.json scripts.test',
      'scripts/run-tests.mjs',
      'scripts/helper.mjs',
      'package.json scripts.posttest',
    ]);
  });

  it('a forged test script, a new posttest hook and a forged allium-loop.yaml are changes; a new dependency is not', async () => {
    const files = {
      'allium-loop.yaml': 'testCommand: npm test\n',
      'package.json': '{\n  "scripts": {\n    "test": "node --test"\n  }\n}\n',
    };
    const forged = await change(files, 'npm test', {
      'package.json':
        '{\n  "scripts": {\n    "test": "echo \'# pass 1\'",\n    "posttest": "true"\n  },\n  "dependencies": { "x": "1" }\n}\n',
      'allium-loop.yaml': 'testCommand: echo ok\n',
    });
    expect(forged.changed.sort()).toEqual([
      'allium-loop.yaml',
      'package.json scripts.posttest',
      'package.json scripts.test',
    ]);
    expect(forged.after).toBe(0);
    const restored = JSON.parse(await readFile(join(forged.dir, 'package.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    expect(restored).toEqual({ scripts: { test: 'node --test' }, dependencies: { x: '1' } });
    const benign = await change(files, 'npm test', {
      'package.json':
        '{\n  "scripts": {\n    "test": "node --test",\n    "build": "tsc"\n  },\n  "dependencies": {}\n}\n',
    });
    expect(benign.changed).toEqual([]);
  });

  it('the Makefile behind make check, what its recipe runs, and a sourced shell file', async () => {
    const files = {
      Makefile: 'include rules.mk\ncheck:\n\t@sh scripts/check.sh\n',
      'rules.mk': 'X = 1\n',
      'scripts/check.sh': '. ./scripts/env.sh\nnode scripts/verify.mjs\n',
      'scripts/env.sh': 'export LIMIT=3\n',
      'scripts/verify.mjs': "import { rules } from './rules.mjs';\n",
      'scripts/rules.mjs': 'export const rules = [];\n',
    };
    for (const [path, text] of [
      ['Makefile', 'check:\n\ttrue\n'],
      ['rules.mk', 'X = 2\n'],
      ['scripts/check.sh', 'exit 0\n'],
      ['scripts/env.sh', 'export LIMIT=0\n'],
      ['scripts/verify.mjs', 'process.exit(0)\n'],
      ['scripts/rules.mjs', 'export const rules = ["all"];\n'],
    ] as const) {
      const result = await change(files, 'make check', { [path]: text });
      expect(result.changed, path).toEqual([path]);
      expect(await readFile(join(result.dir, path), 'utf8')).toBe(files[path]);
    }
  });

  it('a binary through a relative PATH entry, including one that appears later and shadows the real one', async () => {
    const files = { 'bin/check-it': '#!/bin/sh\ntest -f done.txt\n' };
    const edited = await change(files, 'PATH=./bin:$PATH check-it', {
      'bin/check-it': '#!/bin/sh\nexit 0\n',
    });
    expect(edited.changed).toEqual(['bin/check-it']);
    const shadow = await change(
      {},
      'git status',
      { 'tools/git': '#!/bin/sh\nexit 0\n' },
      { PATH: 'tools:/usr/bin:/bin' },
    );
    expect(shadow.changed).toEqual(['tools/git']);
    expect(shadow.after).toBe(0);
  });

  it('runner configuration: vitest config and setup file, pytest sections and conftest.py, present or absent', async () => {
    const files = {
      'vitest.config.ts': "export default { test: { setupFiles: ['./test/setup.ts'] } };\n",
      'test/setup.ts': 'export {};\n',
      'pyproject.toml':
        '[project]\nname = "x"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
      'tests/conftest.py': 'import pytest\n',
    };
    expect(await labels(await project(files), 'vitest run && pytest')).toEqual(
      expect.arrayContaining([
        'vitest.config.ts',
        'test/setup.ts',
        'pyproject.toml [tool.pytest.ini_options]',
        'tests/conftest.py',
        'pytest.ini',
        'conftest.py',
      ]),
    );
    const section = await change(files, 'pytest', {
      'pyproject.toml':
        '[project]\nname = "x"\ndependencies = ["requests"]\n\n[tool.pytest.ini_options]\naddopts = "--co"\n',
    });
    expect(section.changed).toEqual(['pyproject.toml [tool.pytest.ini_options]']);
    expect(await readFile(join(section.dir, 'pyproject.toml'), 'utf8')).toContain(
      'dependencies = ["requests"]',
    );
    expect(await readFile(join(section.dir, 'pyproject.toml'), 'utf8')).toContain('addopts = "-q"');
    const created = await change(files, 'pytest', { 'pytest.ini': '[pytest]\naddopts = --co\n' });
    expect(created.changed).toEqual(['pytest.ini']);
  });

  it('leaves out what the command only reads and the code under work', async () => {
    const dir = await project({
      'done.txt': 'x\n',
      'check.mjs': "import '../x/src/y.js';\nimport './src/a.mjs';\n",
      'src/a.mjs': '',
    });
    expect(await labels(dir, 'test -f done.txt && node check.mjs')).toEqual([
      'allium-loop.yaml',
      'check.mjs',
    ]);
  });
});

describe('the record outside the project', () => {
  it('is saved under XDG_STATE_HOME, loaded by slug and found as the latest for the project', async () => {
    const dir = await project({ 'allium-loop.yaml': 'testCommand: node --test\n' });
    const env = { XDG_STATE_HOME: await mkdtemp(join(tmpdir(), 'harness-state-')) };
    const record = await fingerprintHarness({ cwd: dir, commands: ['node --test'] });
    const file = await saveHarnessRecord(dir, 'a-run', record, env);
    expect(file?.startsWith(env.XDG_STATE_HOME)).toBe(true);
    expect((await loadHarnessRecord(dir, 'a-run', env))?.record).toEqual(record);
    expect((await latestHarnessRecord(dir, env))?.slug).toBe('a-run');
    expect(await latestHarnessRecord(await project({}), env)).toBeUndefined();
  });
});

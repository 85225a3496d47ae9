import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlliumLoopError } from '@allium-loop/errors';
import { describe, expect, it } from 'vitest';
import { discoverTestCommand, NO_TEST_COMMAND_HINT } from './discover-test-command.js';

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'verify-discover-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

const pkg = (script: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ name: 'p', scripts: { test: script }, ...extra });

describe('discoverTestCommand', () => {
  const cases: [string, Record<string, string>, string, string][] = [
    [
      'config wins over everything',
      { 'allium-loop.yaml': 'testCommand: make check\n', 'package.json': pkg('vitest run'), 'go.mod': '' },
      'make check',
      'allium-loop.yaml testCommand',
    ],
    [
      'npm by package-lock.json',
      { 'package.json': pkg('node --test'), 'package-lock.json': '{}' },
      'npm test',
      'package.json test script',
    ],
    [
      'pnpm by its lockfile',
      { 'package.json': pkg('node --test'), 'pnpm-lock.yaml': '' },
      'pnpm test',
      'package.json test script',
    ],
    [
      'yarn by its lockfile',
      { 'package.json': pkg('node --test'), 'yarn.lock': '' },
      'yarn test',
      'package.json test script',
    ],
    [
      'bun by its lockfile',
      { 'package.json': pkg('node --test'), 'bun.lockb': '' },
      'bun run test',
      'package.json test script',
    ],
    [
      'packageManager field without a lockfile',
      { 'package.json': pkg('node --test', { packageManager: 'pnpm@9.1.0' }) },
      'pnpm test',
      'package.json test script',
    ],
    ['no lockfile means npm', { 'package.json': pkg('node --test') }, 'npm test', 'package.json test script'],
    [
      'npm init placeholder is skipped',
      { 'package.json': pkg('echo "Error: no test specified" && exit 1'), 'pytest.ini': '' },
      'pytest',
      'pytest.ini',
    ],
    ['pyproject.toml', { 'pyproject.toml': '' }, 'pytest', 'pyproject.toml'],
    ['setup.cfg', { 'setup.cfg': '' }, 'pytest', 'setup.cfg'],
    ['go.mod', { 'go.mod': 'module x' }, 'go test -json ./...', 'go.mod'],
    ['Cargo.toml', { 'Cargo.toml': '' }, 'cargo test', 'Cargo.toml'],
    ['pom.xml', { 'pom.xml': '' }, 'mvn test', 'pom.xml'],
    ['pom.xml with the wrapper', { 'pom.xml': '', mvnw: '' }, './mvnw test', 'pom.xml'],
    ['build.gradle.kts', { 'build.gradle.kts': '' }, 'gradle test', 'build.gradle.kts'],
    [
      'Makefile with a test target',
      { Makefile: '.PHONY: test\ntest: build\n\tgo test\n' },
      'make test',
      'Makefile',
    ],
    [
      'python before go before cargo',
      { 'pyproject.toml': '', 'go.mod': '', 'Cargo.toml': '' },
      'pytest',
      'pyproject.toml',
    ],
  ];
  it.each(cases)('%s', async (_name, files, command, source) => {
    const found = await discoverTestCommand(await project(files));
    expect(found.command).toBe(command);
    expect(found.source).toBe(source);
    expect(found.reason.length).toBeGreaterThan(0);
  });

  it('asks vitest and jest for their JSON report, through the package manager', async () => {
    const vitest = await discoverTestCommand(
      await project({ 'package.json': pkg('vitest run'), 'package-lock.json': '' }),
    );
    expect(vitest.report).toEqual({
      format: 'jest-json',
      option: ' -- --reporter=default --reporter=json --outputFile.json={file}',
    });
    expect(vitest.reason).toBe('package.json has a test script (`vitest run`); package-lock.json names npm');
    const jest = await discoverTestCommand(
      await project({ 'package.json': pkg('jest --ci'), 'yarn.lock': '' }),
    );
    expect(jest.report).toEqual({ format: 'jest-json', option: ' --json --outputFile={file}' });
    const other = await discoverTestCommand(await project({ 'package.json': pkg('nx run-many -t test') }));
    expect(other.report).toBeUndefined();
  });

  it('pytest writes JUnit XML', async () => {
    expect((await discoverTestCommand(await project({ 'pytest.ini': '' }))).report).toEqual({
      format: 'junit',
      option: ' --junitxml={file}',
    });
  });

  it('a Makefile without a test target does not count', async () => {
    await expect(
      discoverTestCommand(await project({ Makefile: 'build:\n\tcc x.c\ntest-data := x\n' })),
    ).rejects.toSatisfy((error) => AlliumLoopError.is(error) && error.code === 'verify.no_test_command');
  });

  it('nothing found: a clear error telling the user to set testCommand', async () => {
    const cwd = await project({ 'README.md': '# hi' });
    const error: unknown = await discoverTestCommand(cwd).catch((caught: unknown) => caught);
    expect(AlliumLoopError.is(error)).toBe(true);
    const typed = error as AlliumLoopError;
    expect(typed.code).toBe('verify.no_test_command');
    expect(typed.message).toBe(`No test command found in ${cwd}.`);
    expect(typed.hint).toBe(NO_TEST_COMMAND_HINT);
    expect(typed.hint).toContain('testCommand: npm test');
    expect(typed.hint).toContain('allium-loop.yaml');
  });
});

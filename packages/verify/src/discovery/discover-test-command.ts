import { access, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestCommand } from '../test-run.js';
import { VerifyError } from '../verify-error.js';
import { CONFIG_FILE, readTestCommandConfig } from './test-command-config.js';

/** The message and hint of the error raised when no test command can be found. */
export const NO_TEST_COMMAND_HINT =
  `Set it once in ${CONFIG_FILE} at the project root, e.g. \`testCommand: npm test\` ` +
  '(any shell command that runs the whole test suite and exits non-zero on failure).';

type Probe = (cwd: string) => Promise<TestCommand | undefined>;

/**
 * Finds the command that runs the project's tests, in this order: `testCommand` in `allium-loop.yaml`; the
 * `package.json` `test` script run with the package manager its lockfile names (npm, pnpm, yarn, bun); pytest for
 * `pyproject.toml`/`pytest.ini`/`setup.cfg`; `go test` for `go.mod`; `cargo test` for `Cargo.toml`; Maven or
 * Gradle (their wrappers when present); a `Makefile` with a `test` target. The result says where the command came
 * from and why.
 *
 * Throws {@link VerifyError} `verify.no_test_command` (with the instruction to set `testCommand`) when nothing is
 * found, and `verify.config_invalid` when `allium-loop.yaml` is unreadable.
 */
export async function discoverTestCommand(cwd: string): Promise<TestCommand> {
  const probes: Probe[] = [fromConfig, fromPackageJson, fromPython, fromGo, fromCargo, fromJvm, fromMakefile];
  for (const probe of probes) {
    const found = await probe(cwd);
    if (found !== undefined) return found;
  }
  throw new VerifyError(`No test command found in ${cwd}.`, {
    code: 'verify.no_test_command',
    context: { cwd },
    hint: NO_TEST_COMMAND_HINT,
  });
}

async function fromConfig(cwd: string): Promise<TestCommand | undefined> {
  const command = await readTestCommandConfig(cwd);
  if (command === undefined) return undefined;
  return { command, source: `${CONFIG_FILE} testCommand`, reason: `configured in ${CONFIG_FILE}` };
}

const NPM_PLACEHOLDER = /no test specified/;
const LOCKFILES: readonly (readonly [string, string])[] = [
  ['package-lock.json', 'npm'],
  ['npm-shrinkwrap.json', 'npm'],
  ['pnpm-lock.yaml', 'pnpm'],
  ['yarn.lock', 'yarn'],
  ['bun.lock', 'bun'],
  ['bun.lockb', 'bun'],
];
const RUN_TEST: Readonly<Record<string, string>> = {
  npm: 'npm test',
  pnpm: 'pnpm test',
  yarn: 'yarn test',
  bun: 'bun run test',
};

async function fromPackageJson(cwd: string): Promise<TestCommand | undefined> {
  const text = await readOptional(join(cwd, 'package.json'));
  if (text === undefined) return undefined;
  const manifest = parseJsonObject(text);
  const scripts = manifest?.['scripts'] as Record<string, unknown> | undefined;
  const script = scripts?.['test'];
  if (typeof script !== 'string' || script.trim() === '' || NPM_PLACEHOLDER.test(script)) return undefined;
  const { manager, why } = await packageManager(cwd, manifest);
  const base = RUN_TEST[manager] ?? 'npm test';
  const separator = manager === 'npm' ? ' --' : '';
  const runner = script.trim().split(/\s+/)[0];
  const report =
    runner === 'vitest'
      ? {
          format: 'jest-json' as const,
          option: `${separator} --reporter=default --reporter=json --outputFile.json={file}`,
        }
      : runner === 'jest'
        ? { format: 'jest-json' as const, option: `${separator} --json --outputFile={file}` }
        : undefined;
  return {
    command: base,
    source: 'package.json test script',
    reason: `package.json has a test script (\`${script.trim()}\`); ${why}`,
    ...(report === undefined ? {} : { report }),
  };
}

async function packageManager(
  cwd: string,
  manifest: Record<string, unknown> | undefined,
): Promise<{ manager: string; why: string }> {
  for (const [file, manager] of LOCKFILES) {
    if (await exists(join(cwd, file))) return { manager, why: `${file} names ${manager}` };
  }
  const declared = manifest?.['packageManager'];
  if (typeof declared === 'string') {
    const manager = declared.split('@')[0] ?? '';
    if (manager in RUN_TEST) return { manager, why: `package.json packageManager names ${manager}` };
  }
  return { manager: 'npm', why: 'no lockfile, so npm' };
}

async function fromPython(cwd: string): Promise<TestCommand | undefined> {
  for (const file of ['pyproject.toml', 'pytest.ini', 'setup.cfg']) {
    if (await exists(join(cwd, file))) {
      return {
        command: 'pytest',
        source: file,
        reason: `${file} marks a Python project; pytest runs its tests`,
        report: { format: 'junit', option: ' --junitxml={file}' },
      };
    }
  }
  return undefined;
}

async function fromGo(cwd: string): Promise<TestCommand | undefined> {
  if (!(await exists(join(cwd, 'go.mod')))) return undefined;
  return {
    command: 'go test -json ./...',
    source: 'go.mod',
    reason: 'go.mod marks a Go module; -json for per-test results',
  };
}

async function fromCargo(cwd: string): Promise<TestCommand | undefined> {
  if (!(await exists(join(cwd, 'Cargo.toml')))) return undefined;
  return { command: 'cargo test', source: 'Cargo.toml', reason: 'Cargo.toml marks a Rust crate' };
}

async function fromJvm(cwd: string): Promise<TestCommand | undefined> {
  if (await exists(join(cwd, 'pom.xml'))) {
    const wrapper = await exists(join(cwd, 'mvnw'));
    return {
      command: wrapper ? './mvnw test' : 'mvn test',
      source: 'pom.xml',
      reason: 'pom.xml marks a Maven project',
    };
  }
  for (const file of ['build.gradle', 'build.gradle.kts']) {
    if (await exists(join(cwd, file))) {
      const wrapper = await exists(join(cwd, 'gradlew'));
      return {
        command: wrapper ? './gradlew test' : 'gradle test',
        source: file,
        reason: `${file} marks a Gradle project`,
      };
    }
  }
  return undefined;
}

const MAKE_TEST_TARGET = /^test\s*:(?!=)/m;

async function fromMakefile(cwd: string): Promise<TestCommand | undefined> {
  for (const file of ['Makefile', 'makefile', 'GNUmakefile']) {
    const text = await readOptional(join(cwd, file));
    if (text !== undefined && MAKE_TEST_TARGET.test(text)) {
      return { command: 'make test', source: file, reason: `${file} has a test target` };
    }
  }
  return undefined;
}

function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
}

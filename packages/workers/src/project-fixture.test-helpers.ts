import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createSpecReader } from './create-spec-reader.js';
import { createTestRunner } from './create-test-runner.js';
import type { ProtectedTest } from './detect-violations.js';
import type { PhaseContext } from './phase-context.js';
import { recordProtectedTests } from './protect-tests.js';
import { scriptedAgent, type ScriptStep } from './scripted-agent.test-helpers.js';
import { TOOL_LIBRARY_SPEC } from './spec-fixtures.test-helpers.js';
import type { WorkerDeps } from './worker-ports.js';

/** Code with one bug: giving a tool back does not put it on the shelf. */
export const LIBRARY_CODE = `export function borrow(tool, member) {
  if (tool.status !== 'shelved') throw new Error('tool is out');
  tool.status = 'out';
  return { tool, member, status: 'open' };
}

export function giveBack(borrowing) {
  borrowing.status = 'closed';
}
`;

/** A generated test, recorded as protected by the fixture. */
export const BORROW_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { borrow } from '../src/library.mjs';

test('Borrow: marks the tool out', () => {
  const tool = { status: 'shelved' };
  borrow(tool, 'ada');
  assert.equal(tool.status, 'out');
});
`;

/** A hand-written test the engine does not protect. */
export const EXTRA_TEST = `import { test } from 'node:test';
import assert from 'node:assert/strict';
import { borrow } from '../src/library.mjs';

test('Borrow: refuses a tool that is out', () => {
  assert.throws(() => borrow({ status: 'out' }, 'ada'));
});
`;

/** A temporary project: spec, buggy code, one protected and one hand-written test. */
export interface Project {
  readonly cwd: string;
  readonly protectedTests: readonly ProtectedTest[];
}

async function put(cwd: string, path: string, text: string): Promise<void> {
  await mkdir(dirname(join(cwd, path)), { recursive: true });
  await writeFile(join(cwd, path), text);
}

/** Creates the fixture project in a fresh temp dir; `withSpec: false` leaves out the spec (for elicit). */
export async function createProject(options: { withSpec?: boolean } = {}): Promise<Project> {
  const cwd = await mkdtemp(join(tmpdir(), 'allium-workers-'));
  if (options.withSpec !== false) await put(cwd, 'spec/library.allium', TOOL_LIBRARY_SPEC);
  await put(cwd, 'src/library.mjs', LIBRARY_CODE);
  await put(cwd, 'test/borrow.test.mjs', BORROW_TEST);
  await put(cwd, 'test/extra.test.mjs', EXTRA_TEST);
  const protectedTests = await recordProtectedTests(cwd, 'tools', ['test/borrow.test.mjs'], 1);
  return { cwd, protectedTests };
}

/** Real dependencies for a project, with a scripted agent. */
export async function projectDeps(project: Project, steps: readonly ScriptStep[]): Promise<WorkerDeps> {
  return {
    agent: await scriptedAgent(steps),
    spec: createSpecReader(),
    tests: createTestRunner({
      command: { command: 'node --test', source: 'test fixture', reason: 'node:test project' },
      outputDir: join(project.cwd, '.allium-loop', 'tools', 'test-runs'),
      timeoutMs: 60_000,
    }),
  };
}

/** A phase context for the fixture project. */
export function projectContext(project: Project, overrides: Partial<PhaseContext> = {}): PhaseContext {
  return {
    cwd: project.cwd,
    slug: 'tools',
    tick: 2,
    goal: 'Members borrow and give back tools',
    mode: 'spec-first',
    paths: { spec: ['spec/library.allium'], tests: ['test/borrow.test.mjs'], code: ['src/library.mjs'] },
    parkedQuestions: [{ text: 'May a worn tool be lent?', assumption: 'yes' }],
    protectedTests: project.protectedTests,
    timeoutMs: 30_000,
    ...overrides,
  };
}

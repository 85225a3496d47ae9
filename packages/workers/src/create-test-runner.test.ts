import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkClaims, declaresTestNaming } from './check-claims.js';
import { createTestRunner } from './create-test-runner.js';
import { classifyRedCheck } from './red-check.js';

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'workers-runner-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

const MISSING_IMPORT = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeTally } from '../src/tally.js';
test('CloseTally closes an open tally', () => { assert.equal(closeTally({ status: 'open' }).status, 'closed'); });
`;

describe('a propagated test file the runner cannot load is red, never "no tests"', () => {
  it('node --test: a failed load-error case; its covers are proven from the source; red-check red', async () => {
    const cwd = await project({
      'package.json': '{ "type": "module" }\n',
      'test/tally.test.js': MISSING_IMPORT,
    });
    const runner = createTestRunner({
      command: { command: 'node --test', source: 'test', reason: 'test' },
      outputDir: join(cwd, '.allium-loop', 'runs'),
    });
    const run = await runner.runFiles({ cwd, files: ['test/tally.test.js'] });
    expect(run.collected).toBe(true);
    expect(run.cases).toEqual([expect.objectContaining({ status: 'failed', loadError: true })]);
    const testRuns = new Map([['test/tally.test.js', run]]);
    const result = {
      phase: 'propagate' as const,
      obligations: { total: 1, covered: 1, uncovered: 0 },
      uncovered_obligations: [],
      generated_tests: [{ path: 'test/tally.test.js', hash: 'sha256:unchecked-here' }],
      summary: '1 obligations, 1 covered, 0 uncovered',
    };
    const claims = (obligations: string[]) => ({ covers: [{ path: 'test/tally.test.js', obligations }] });
    const reading = {
      diagnostics: [],
      openQuestions: [],
      constructs: new Map(),
      graph: { nodes: [], edges: [] },
    };
    const evidence = {
      specBefore: reading,
      specAfter: reading,
      diff: { added: [], removed: [], changed: [] },
      missingFiles: [],
      testRuns,
    } as unknown as Parameters<typeof checkClaims>[1];
    expect(
      checkClaims(result, {
        ...evidence,
        loopRecord: claims(['CloseTally']),
        testSources: new Map([['test/tally.test.js', MISSING_IMPORT]]),
      }),
    ).toEqual([]);
    const wrong = checkClaims(result, {
      ...evidence,
      loopRecord: claims(['ArchiveTally']),
      testSources: new Map([['test/tally.test.js', MISSING_IMPORT]]),
    });
    expect(wrong).toHaveLength(1);
    expect(wrong[0]!.reason).toBe('coverage_unproven');
    expect(wrong[0]!.detail).toContain('could not be loaded by the test runner');
    expect(wrong[0]!.detail).toContain('ArchiveTally');
    const red = classifyRedCheck('spec-first', testRuns, new Map([['test/tally.test.js', MISSING_IMPORT]]));
    expect(red.verdicts.map((v) => v.classification)).toEqual(['red']);
  });

  it('a runner whose output cannot be read and that fails (mocha on an import error): every file is a load error', async () => {
    const cwd = await project({ 'test/a.spec.js': 'require("../src/missing")\n' });
    const runner = createTestRunner({
      command: {
        command: 'sh -c \'echo "Error: Cannot find module ../src/missing" >&2; exit 1\' mocha',
        source: 'test',
        reason: 'test',
      },
      outputDir: join(cwd, '.allium-loop', 'runs'),
    });
    const run = await runner.runFiles({ cwd, files: ['test/a.spec.js'] });
    expect(run.cases).toEqual([
      expect.objectContaining({ name: 'test/a.spec.js', status: 'failed', loadError: true }),
    ]);
  });

  it('a file that loads but declares no test is still not collected', async () => {
    const cwd = await project({
      'package.json': '{ "type": "module" }\n',
      'test/empty.test.js': '// nothing\n',
    });
    const runner = createTestRunner({
      command: { command: 'node --test', source: 'test', reason: 'test' },
      outputDir: join(cwd, '.allium-loop', 'runs'),
    });
    const run = await runner.runFiles({ cwd, files: ['test/empty.test.js'] });
    expect(run.collected).toBe(false);
  });

  it.each([
    ['def test_close_tally_closes():', 'CloseTally', true],
    ["test('CloseTally closes', () => {", 'CloseTally', true],
    ['func TestCloseTally(t *testing.T) {', 'CloseTally', true],
    ['# CloseTally is mentioned in a comment only', 'CloseTally', false],
  ])('declaresTestNaming(%j, %s) = %s', (source, name, expected) => {
    expect(declaresTestNaming(source, name)).toBe(expected);
  });
});

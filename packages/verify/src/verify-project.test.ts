import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_POLICY } from '@allium-loop/evaluator';
import { describe, expect, it } from 'vitest';
import { verifyProject } from './verify-project.js';

const passing = `import { test } from 'node:test';\ntest('ok', () => {});\n`;
const failing = `import { test } from 'node:test';\nimport assert from 'node:assert';\ntest('ok', () => {});\ntest('bad', () => assert.fail('no'));\n`;
const spec = '-- allium: 3\n\nopen question "Who approves refunds?"\n';

async function project(tests: string, withSpec = true): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), 'verify-project-'));
  await writeFile(
    join(cwd, 'package.json'),
    JSON.stringify({ type: 'module', scripts: { test: 'node --test' } }),
  );
  await writeFile(join(cwd, 'a.test.mjs'), tests);
  if (withSpec) await writeFile(join(cwd, 'a.allium'), spec);
  return cwd;
}

const noReference = {
  PATH: process.env['PATH']!.split(':')
    .filter((dir) => !dir.includes('fixtures'))
    .join(':'),
};

describe('verifyProject', () => {
  it('converges when the tests pass, weed is clean and the only question is classified by nobody (parked)', async () => {
    const cwd = await project(passing);
    const result = await verifyProject({
      cwd,
      policy: DEFAULT_POLICY,
      weed: { status: 'clean' },
      env: noReference,
    });
    expect(result.tests.command.command).toBe('npm test');
    expect(result.observation).toEqual({
      tests: { counts: 'known', passed: 1, failed: 0, skipped: 0, failing: [], exitCode: 0 },
      weed: { status: 'clean' },
      structuralErrors: 0,
      openQuestions: { blocking: 0, parked: 1 },
    });
    expect(result.verdict).toEqual({ converged: true, unmet: [] });
  });

  it('names every unmet term: failing test, a question the ledger records as blocking, weed not run', async () => {
    const cwd = await project(failing);
    const result = await verifyProject({
      cwd,
      policy: DEFAULT_POLICY,
      weed: { status: 'not_run' },
      blockingQuestions: ['who approves  refunds'],
      env: noReference,
    });
    expect(result.verdict.converged).toBe(false);
    expect(result.verdict.unmet.map((term) => term.term)).toEqual([
      'tests_failing',
      'weed_not_run',
      'questions_blocking',
    ]);
    expect(result.verdict.unmet[0]!.names).toEqual(['bad']);
  });
});

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { verifyCommand, type LedgerFacts } from './verify.js';

const passing = `import { test } from 'node:test';\ntest('ok', () => {});\n`;
const failing = `import { test } from 'node:test';\nimport assert from 'node:assert';\ntest('ok', () => {});\ntest('bad', () => assert.fail('no'));\n`;

async function project(tests: string, spec?: string): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), 'cli-verify-'));
  await writeFile(join(cwd, 'allium-loop.yaml'), 'testCommand: node --test\n');
  await writeFile(join(cwd, 'a.test.mjs'), tests);
  if (spec !== undefined) await writeFile(join(cwd, 'a.allium'), spec);
  return cwd;
}

async function verify(cwd: string, args: string[], ledger?: LedgerFacts) {
  const io = createRecordingIo(cwd);
  const command =
    ledger === undefined ? verifyCommand() : verifyCommand({ readLedgerFacts: async () => ledger });
  const code = await command.run(args, io);
  return { code, out: io.out(), err: io.err() };
}

describe('allium-loop verify', () => {
  it('exits 0 when converged (weed not required)', async () => {
    const { code, out } = await verify(await project(passing, '-- allium: 3\n'), ['--no-weed']);
    expect(out).toContain('tests: 1 passed, 0 failed, 0 skipped (read by tap)');
    expect(out).toContain('weed: not required (--no-weed)');
    expect(out.trimEnd().endsWith('converged')).toBe(true);
    expect(code).toBe(0);
  });

  it('without --no-weed and no ledger verdict, weed not run is an unmet term', async () => {
    const { code, out } = await verify(await project(passing), []);
    expect(code).toBe(1);
    expect(out).toContain('weed: not_run (no weed verdict');
    expect(out).toContain('  ✗ weed: not run');
  });

  it('exits 1 and prints each unmet term (a question the ledger records as blocking among them)', async () => {
    const spec = '-- allium: 3\n\nopen question "Who approves refunds?"\n';
    const ledger: LedgerFacts = {
      weed: { status: 'not_run' },
      blockingQuestions: ['Who approves refunds?'],
      note: 'from a test ledger',
    };
    const { code, out } = await verify(await project(failing, spec), ['--no-weed'], ledger);
    expect(code).toBe(1);
    expect(out).toContain('not converged:\n  ✗ tests: 1 failing (bad)\n  ✗ open questions: 1 blocking\n');
  });

  it('an open question nobody classified is parked: a clean weed verdict converges, unless --strict-questions', async () => {
    const spec = '-- allium: 3\n\nopen question "Who approves refunds?"\n';
    const ledger: LedgerFacts = {
      weed: { status: 'clean' },
      blockingQuestions: [],
      note: 'from a test ledger',
    };
    const cwd = await project(passing, spec);
    expect((await verify(cwd, [], ledger)).code).toBe(0);
    const strict = await verify(cwd, ['--strict-questions'], ledger);
    expect(strict.code).toBe(1);
    expect(strict.out).toContain('✗ open questions: 1 parked (--strict-questions)');
  });

  it('--json prints one document with the verdict and the measurements', async () => {
    const { code, out } = await verify(await project(failing), ['--json', '--no-weed']);
    expect(code).toBe(1);
    const document = JSON.parse(out) as Record<string, unknown>;
    expect(document).toMatchObject({
      converged: false,
      unmet: [{ term: 'tests_failing', count: 1, names: ['bad'] }],
      tests: { counts: { kind: 'known', passed: 1, failed: 1, skipped: 0, parser: 'tap' }, exitCode: 1 },
      policy: { requireWeed: false, strictQuestions: false, codeFirst: false },
    });
  });

  it('says counts: unknown loudly when the output cannot be read', async () => {
    const cwd = await project(passing);
    await writeFile(join(cwd, 'allium-loop.yaml'), 'testCommand: echo all good\n');
    const { code, out } = await verify(cwd, ['--no-weed']);
    expect(code).toBe(1);
    expect(out).toContain('tests: counts: unknown — no known test runner summary in the output; exit code 0');
  });

  it('exits 2 with the instruction when no test command can be found', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'cli-verify-'));
    const { code, err } = await verify(cwd, []);
    expect(code).toBe(2);
    expect(err).toContain('No test command found');
    expect(err).toContain('testCommand: npm test');
  });

  it('exits 2 on an unknown flag, and 0 on --help', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'cli-verify-'));
    expect((await verify(cwd, ['--frobnicate'])).code).toBe(2);
    const help = await verify(cwd, ['--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('--strict-questions');
  });
});

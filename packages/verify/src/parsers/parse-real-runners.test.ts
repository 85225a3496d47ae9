import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runTests } from '../run/run-tests.js';
import type { TestCommand } from '../test-run.js';

// Output captured by really running each runner installed on this machine, through the engine's own runTests.
const vitestBin = fileURLToPath(new URL('../../../../node_modules/.bin/vitest', import.meta.url));

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'verify-real-'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  return dir;
}

async function run(dir: string, command: TestCommand) {
  return runTests({ command, cwd: dir, outputDir: join(dir, '.out'), timeoutMs: 60_000 });
}

const nodeTests = `import { test } from 'node:test';
import assert from 'node:assert';
test('passes', () => {});
test('fails', () => { assert.equal(1, 2); });
test('skipped', { skip: true }, () => {});
test('suite', async (t) => { await t.test('inner ok', () => {}); });
`;

describe('real runners', () => {
  it('node --test, TAP reporter', async () => {
    const dir = await project({ 'a.test.mjs': nodeTests });
    const result = await run(dir, { command: 'node --test --test-reporter=tap', source: 't', reason: 't' });
    expect(result.exitCode).toBe(1);
    expect(result.counts).toEqual({ kind: 'known', passed: 3, failed: 1, skipped: 1, parser: 'tap' });
    expect(result.cases).toContainEqual({ name: 'fails', status: 'failed' });
    expect(result.cases).toContainEqual({ name: 'suite > inner ok', status: 'passed' });
    expect(result.cases).toContainEqual({ name: 'skipped', status: 'skipped' });
  });

  it('node --test, spec reporter', async () => {
    const dir = await project({ 'a.test.mjs': nodeTests });
    const result = await run(dir, { command: 'node --test --test-reporter=spec', source: 't', reason: 't' });
    expect(result.counts).toEqual({
      kind: 'known',
      passed: 3,
      failed: 1,
      skipped: 1,
      parser: 'node-spec-summary',
    });
    expect(result.cases).toEqual([{ name: 'fails', status: 'failed' }]);
  });

  const vitestFiles = {
    'package.json': '{"type":"module"}',
    'a.test.ts': `import { describe, it, expect } from 'vitest';
describe('group', () => {
  it('passes', () => { expect(1).toBe(1); });
  it('fails', () => { expect(1).toBe(2); });
  it.skip('skipped', () => {});
});
`,
  };

  it('vitest, JSON report', async () => {
    const dir = await project(vitestFiles);
    const result = await run(dir, {
      command: `${vitestBin} run`,
      source: 't',
      reason: 't',
      report: { format: 'jest-json', option: ' --reporter=default --reporter=json --outputFile.json={file}' },
    });
    expect(result.exitCode).toBe(1);
    expect(result.reportPath).toBeDefined();
    expect(result.counts).toEqual({ kind: 'known', passed: 1, failed: 1, skipped: 1, parser: 'jest-json' });
    expect(result.cases).toContainEqual(expect.objectContaining({ name: 'group fails', status: 'failed' }));
  });

  it('vitest, closing lines only', async () => {
    const dir = await project(vitestFiles);
    const result = await run(dir, { command: `${vitestBin} run`, source: 't', reason: 't' });
    expect(await readFile(result.outputPath, 'utf8')).toContain('Tests');
    expect(result.counts).toEqual({
      kind: 'known',
      passed: 1,
      failed: 1,
      skipped: 1,
      parser: 'vitest-summary',
    });
    expect(result.cases).toEqual([{ name: 'a.test.ts > group > fails', status: 'failed' }]);
  });

  const pytestFiles = {
    'test_a.py': `import pytest
def test_pass(): assert 1 == 1
def test_fail(): assert 1 == 2
@pytest.mark.skip(reason="later")
def test_skip(): pass
class TestGroup:
    def test_inner(self): pass
`,
  };

  it('pytest, JUnit XML report', async () => {
    const dir = await project(pytestFiles);
    const result = await run(dir, {
      command: 'pytest -p no:cacheprovider',
      source: 't',
      reason: 't',
      report: { format: 'junit', option: ' --junitxml={file}' },
    });
    expect(result.exitCode).toBe(1);
    expect(result.counts).toEqual({ kind: 'known', passed: 2, failed: 1, skipped: 1, parser: 'junit-xml' });
    expect(result.cases).toContainEqual({
      name: 'test_a::test_fail',
      status: 'failed',
      message: 'assert 1 == 2',
    });
    expect(result.cases).toContainEqual({ name: 'test_a.TestGroup::test_inner', status: 'passed' });
  });

  it('pytest, closing line (verbose and -q)', async () => {
    const dir = await project(pytestFiles);
    for (const command of ['pytest -p no:cacheprovider', 'pytest -q -p no:cacheprovider']) {
      const result = await run(dir, { command, source: 't', reason: 't' });
      expect(result.counts).toEqual({
        kind: 'known',
        passed: 2,
        failed: 1,
        skipped: 1,
        parser: 'pytest-summary',
      });
      expect(result.cases).toEqual([{ name: 'test_a.py::test_fail', status: 'failed' }]);
    }
  });

  it('cargo test on a tiny crate', async () => {
    const dir = await project({
      'Cargo.toml':
        '[package]\nname = "tiny"\nversion = "0.1.0"\nedition = "2021"\n\n[lib]\npath = "lib.rs"\ndoctest = false\n',
      'lib.rs': `pub fn add(a: i32, b: i32) -> i32 { a + b }
#[cfg(test)]
mod tests {
    use super::*;
    #[test] fn passes() { assert_eq!(add(1, 1), 2); }
    #[test] fn fails() { assert_eq!(add(1, 1), 3); }
    #[test] #[ignore] fn ignored() {}
}
`,
    });
    const result = await run(dir, { command: 'cargo test --offline --quiet', source: 't', reason: 't' });
    expect(result.exitCode).toBe(101);
    expect(result.counts).toEqual({
      kind: 'known',
      passed: 1,
      failed: 1,
      skipped: 1,
      parser: 'cargo-summary',
    });
    expect(result.cases.filter((testCase) => testCase.status === 'failed')).toEqual([
      { name: 'tests::fails', status: 'failed' },
    ]);
  });
});

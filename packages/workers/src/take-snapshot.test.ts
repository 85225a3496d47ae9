import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTestPath, sha256, takeSnapshot } from './take-snapshot.js';

describe('isTestPath', () => {
  it.each([
    ['src/a.test.ts', true],
    ['src/a.spec.mjs', true],
    ['tests/helpers.py', true],
    ['pkg/__tests__/x.jsx', true],
    ['app/test_orders.py', true],
    ['svc/orders_test.go', true],
    ['spec/models/order_spec.rb', true],
    ['src/testing.ts', false],
    ['test/fixtures/data.json', false],
    ['spec/library.allium', false],
  ])('%s → %s', (path, expected) => {
    expect(isTestPath(path)).toBe(expected);
  });
});

describe('takeSnapshot', () => {
  it('reads spec and test files and skips dependencies, build output and the engine folder', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'allium-snap-'));
    const files: Record<string, string> = {
      'spec/a.allium': '-- allium: 3\n',
      'test/a.test.ts': "it('A', () => {})\n",
      'src/a.ts': 'export {}\n',
      'node_modules/dep/x.test.js': 'x',
      'dist/a.test.js': 'x',
      '.allium-loop/run/protected/test/a.test.ts': 'x',
      'lib/elsewhere.ts': 'protected but not a test path\n',
    };
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(cwd, path)), { recursive: true });
      await writeFile(join(cwd, path), text);
    }
    const snapshot = await takeSnapshot(cwd, ['lib/elsewhere.ts', 'missing.test.ts']);
    expect([...snapshot.spec.keys()]).toEqual(['spec/a.allium']);
    expect([...snapshot.tests.keys()]).toEqual(['test/a.test.ts', 'lib/elsewhere.ts']);
    expect(snapshot.tests.get('test/a.test.ts')).toEqual({
      text: files['test/a.test.ts'],
      sha256: sha256(files['test/a.test.ts']!),
    });
  });

  it('reads files in folders and under names that are not UTF-8, which the walker hands over with U+FFFD', async () => {
    // A hostile agent's `test\xfe/b\xff.test.ts` is still a test file the snapshot sees, and so is its edit.
    const cwd = await mkdtemp(join(tmpdir(), 'allium-snap-'));
    const folder = Buffer.concat([Buffer.from(`${cwd}/test`), Buffer.from([0xfe])]);
    await mkdir(folder);
    await writeFile(
      Buffer.concat([folder, Buffer.from('/b'), Buffer.from([0xff]), Buffer.from('.test.ts')]),
      'x\n',
    );
    const snapshot = await takeSnapshot(cwd);
    expect(snapshot.tests.get('test\uFFFD/b\uFFFD.test.ts')).toEqual({ text: 'x\n', sha256: sha256('x\n') });
  });
});

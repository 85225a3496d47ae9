import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import setup from '../../../tools/vitest/temp-dir.mjs';

const NAMES = ['TMPDIR', 'TMP', 'TEMP'] as const;

describe('the test run keeps its temporary files in a directory of its own (tools/vitest/temp-dir.mjs)', () => {
  const saved = NAMES.map((name) => [name, process.env[name]] as const);
  afterEach(() => {
    for (const [name, value] of saved) {
      if (value === undefined) Reflect.deleteProperty(process.env, name);
      else process.env[name] = value;
    }
    delete process.env.ALLIUM_LOOP_KEEP_TEST_TMP;
  });

  it('this run is already inside one: the global setup ran before the workers started', () => {
    expect(basename(tmpdir())).toMatch(/^al-test-/);
  });

  it('the teardown removes the directory with whatever was written in it, and restores the variables', () => {
    const before = NAMES.map((name) => process.env[name]);
    const teardown = setup();
    const dir = tmpdir();
    expect(dirname(dir)).toBe(before[0]);
    expect(NAMES.map((name) => process.env[name])).toEqual([dir, dir, dir]);
    // Others pass through it to a path they know, as through /tmp (a child run as another user), but cannot list it.
    expect(statSync(dir).mode & 0o777).toBe(0o711);
    mkdirSync(join(dir, 'repo', '.git'), { recursive: true });
    writeFileSync(join(dir, 'repo', '.git', 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(dir, 'script.json'), '{}');
    teardown();
    expect(existsSync(dir)).toBe(false);
    expect(NAMES.map((name) => process.env[name])).toEqual(before);
  });

  it('ALLIUM_LOOP_KEEP_TEST_TMP=1 keeps it', () => {
    process.env.ALLIUM_LOOP_KEEP_TEST_TMP = '1';
    const teardown = setup();
    const dir = tmpdir();
    writeFileSync(join(dir, 'left.txt'), 'x');
    teardown();
    expect(existsSync(join(dir, 'left.txt'))).toBe(true);
  });
});

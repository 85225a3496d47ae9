import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { chmod, copyFile, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import setup from '../../../tools/vitest/temp-dir.mjs';

const NAMES = ['TMPDIR', 'TMP', 'TEMP'] as const;
const SETUP = new URL('../../../tools/vitest/temp-dir.mjs', import.meta.url);
const exec = promisify(execFile);

/** Sets up, leaves directories a plain recursive removal cannot enter or empty, tears down, says what is left. */
const CHILD = `import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import setup from './temp-dir.mjs';
const teardown = setup();
const dir = tmpdir();
mkdirSync(join(dir, 'locked', 'deeper'), { recursive: true });
writeFileSync(join(dir, 'locked', 'deeper', 'file.txt'), 'x');
mkdirSync(join(dir, 'frozen'));
writeFileSync(join(dir, 'frozen', 'file.txt'), 'x');
chmodSync(join(dir, 'locked', 'deeper'), 0o000);
chmodSync(join(dir, 'locked'), 0o500);
chmodSync(join(dir, 'frozen'), 0o500);
teardown();
console.log(existsSync(dir) ? 'left' : 'removed');
`;

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

  it('the teardown removes a tree a test left unreadable and read-only, as a user who is not root', async () => {
    // Root ignores file modes, so the setup and teardown run in a child: as `nobody` when the tests run as root (from
    // a copy it can reach, in a directory of its own), else as the current user.
    const asRoot = process.getuid?.() === 0;
    const home = await mkdtemp(join(tmpdir(), 'temp-dir-child-'));
    await chmod(home, 0o777);
    await copyFile(fileURLToPath(SETUP), join(home, 'temp-dir.mjs'));
    await writeFile(join(home, 'child.mjs'), CHILD);
    await chmod(join(home, 'temp-dir.mjs'), 0o644);
    await chmod(join(home, 'child.mjs'), 0o644);
    const { stdout } = await exec(process.execPath, [join(home, 'child.mjs')], {
      cwd: home,
      env: { PATH: process.env['PATH'] ?? '', TMPDIR: home },
      ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
    });
    expect(stdout.trim()).toBe('removed');
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

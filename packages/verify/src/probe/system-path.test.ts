import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemPath } from './system-path.js';
import { walkProject } from './probe-project.js';

/** `folder` joined with a name made of `before`, the stray bytes, and `after` (a name that is not UTF-8). */
const oddName = (folder: string, before: string, stray: number[], after: string): Buffer =>
  Buffer.concat([Buffer.from(`${folder}/${before}`), Buffer.from(stray), Buffer.from(after)]);

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'system-path-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('systemPath', () => {
  it('gives a path with no replacement character back as it is, reading nothing', () => {
    expect(systemPath(join(dir, 'missing', 'a.allium'))).toBe(join(dir, 'missing', 'a.allium'));
  });

  it('finds the bytes of names that are not UTF-8, in a folder and in a file name, from the names Node hands over', async () => {
    const folder = oddName(dir, 'sub', [0xfe], '');
    await mkdir(folder);
    await writeFile(
      Buffer.concat([folder, Buffer.from('/caf'), Buffer.from([0xff]), Buffer.from('.allium')]),
      'spec text',
    );
    // What a listing hands over: U+FFFD where the stray bytes are.
    const walk = await walkProject(dir, { skip: new Set(), order: 'directory' });
    expect(walk).toEqual({ files: ['sub\uFFFD/caf\uFFFD.allium'], unreadable: [], truncated: false });
    const bytes = systemPath(join(dir, 'sub\uFFFD', 'caf\uFFFD.allium'));
    expect(Buffer.isBuffer(bytes)).toBe(true);
    expect(readFileSync(bytes as Buffer, 'utf8')).toBe('spec text');
  });

  it('resolves a relative path from the working directory', async () => {
    await writeFile(oddName(dir, 'x', [0xff], '.allium'), 'relative');
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(readFileSync(systemPath('x\uFFFD.allium') as Buffer, 'utf8')).toBe('relative');
    } finally {
      process.chdir(cwd);
    }
  });

  it('refuses a name that two names of the folder read as, and one that names nothing', async () => {
    await writeFile(oddName(dir, 'a', [0xff], '.allium'), 'one');
    await writeFile(oddName(dir, 'a', [0xfe], '.allium'), 'two');
    expect(systemPath(join(dir, 'a\uFFFD.allium'))).toBeUndefined();
    expect(systemPath(join(dir, 'b\uFFFD.allium'))).toBeUndefined();
    expect(systemPath(join(dir, 'gone\uFFFD', 'c.allium'))).toBeUndefined();
  });
});

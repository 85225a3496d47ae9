import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listProjectFiles, readSpecSources } from './project-files.js';

let root = '';
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('readSpecSources', () => {
  it('reads the specs the walker lists, those in folders whose names are not UTF-8 too (listed with U+FFFD)', async () => {
    root = await mkdtemp(join(tmpdir(), 'project-files-'));
    const folder = Buffer.concat([Buffer.from(`${root}/specs`), Buffer.from([0xfe])]);
    await mkdir(folder);
    await writeFile(Buffer.concat([folder, Buffer.from('/a.allium')]), '-- allium: 3\n');
    await writeFile(join(root, 'b.allium'), '-- allium: 3\nentity B {}\n');
    const { spec } = await listProjectFiles(root);
    expect([...spec].sort()).toEqual(['b.allium', 'specs\uFFFD/a.allium']);
    expect(await readSpecSources(root, spec)).toEqual([
      { path: 'b.allium', text: '-- allium: 3\nentity B {}\n' },
      { path: 'specs\uFFFD/a.allium', text: '-- allium: 3\n' },
    ]);
  });
});

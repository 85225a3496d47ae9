import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { inScope, normalizeScope, scopedFiles } from './scope.js';

describe('scope', () => {
  it('normalises the given paths: relative, /-separated, no trailing slash, sorted, deduplicated', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'scope-'));
    await mkdir(join(cwd, 'src/billing'), { recursive: true });
    await writeFile(join(cwd, 'a.allium'), '');
    expect(await normalizeScope(cwd, ['./src/billing/', 'a.allium', ' src/billing ', ''])).toEqual([
      'a.allium',
      'src/billing',
    ]);
    // `.` (or the project root) is the whole project.
    expect(await normalizeScope(cwd, ['src/billing', '.'])).toEqual([]);
    await expect(normalizeScope(cwd, ['nowhere'])).rejects.toMatchObject({ code: 'run.bad_scope' });
    await expect(normalizeScope(cwd, ['../x'])).rejects.toMatchObject({ code: 'run.bad_scope' });
    await mkdir(join(cwd, '.allium-loop'));
    await expect(normalizeScope(cwd, ['.allium-loop'])).rejects.toMatchObject({ code: 'run.bad_scope' });
  });

  it('a path is in scope under a scope root, never by a shared prefix', () => {
    expect(inScope(['src/bill'], 'src/bill/a.ts')).toBe(true);
    expect(inScope(['src/bill'], 'src/bill')).toBe(true);
    expect(inScope(['src/bill'], 'src/billing/a.ts')).toBe(false);
    expect(inScope([], 'anything')).toBe(true);
    expect(
      scopedFiles({ spec: ['a.allium', 'b.allium'], tests: ['test/x.test.ts'], code: ['src/bill/a.ts'] }, [
        'a.allium',
        'src/bill',
      ]),
    ).toEqual({ spec: ['a.allium'], tests: [], code: ['src/bill/a.ts'] });
  });
});

import { mkdtemp, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stateFilePrompt, stateTempFile } from './state-file-mode.js';
import { checkDoneClaim, initialAlState, namedFiles, parseAlState, statedCounts } from './state-file.js';

describe('parseAlState', () => {
  it('reads the /al schema and keeps other keys', () => {
    const parsed = parseAlState(
      '{"status":"in_progress","iteration":2,"goal":"g","progress":"half","result":null,"error":null,"x":1}',
    );
    expect(parsed.ok && parsed.value['x']).toBe(1);
    const bad = parseAlState('{"status":"finished","iteration":0,"goal":"g"}');
    expect(!bad.ok && bad.issues[0]).toMatch(/^status:/);
  });
});

describe('namedFiles and statedCounts', () => {
  it.each([
    ['Wrote 12 entries to out/list.md.', ['out/list.md'], [{ count: 12, unit: 'entries' }]],
    ['report in `summary.json`, 3 rows', ['summary.json'], [{ count: 3, unit: 'rows' }]],
    ['see https://example.com/a.html; done e.g. now', [], []],
    [{ files: ['a/b.txt'], summary: '1,204 lines' }, ['a/b.txt'], [{ count: 1204, unit: 'lines' }]],
  ])('%j', (result, files, counts) => {
    expect(namedFiles(result)).toEqual(files);
    expect(statedCounts(result)).toEqual(counts);
  });
});

describe('checkDoneClaim', () => {
  async function project(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-state-'));
    for (const [path, content] of Object.entries(files)) {
      await mkdir(join(dir, path, '..'), { recursive: true });
      await writeFile(join(dir, path), content);
    }
    return dir;
  }

  it('accepts a result whose file exists and whose count matches', async () => {
    const dir = await project({ 'out/list.md': '# List\n\n- a\n- b\n- c\n' });
    expect(await checkDoneClaim('Wrote 3 items to out/list.md', dir)).toBeUndefined();
  });

  it('rejects a missing file, an empty file, a wrong count and an empty result', async () => {
    const dir = await project({ 'empty.txt': '', 'out/list.md': '- a\n- b\n' });
    expect(await checkDoneClaim('Saved to out/missing.md', dir)).toBe(
      'result names out/missing.md, which does not exist',
    );
    expect(await checkDoneClaim('Saved to empty.txt', dir)).toBe('result names empty.txt, which is empty');
    expect(await checkDoneClaim('Wrote 40 entries to out/list.md', dir)).toMatch(/^result says 40 entries/);
    expect(await checkDoneClaim('', dir)).toBe('status is done but result is empty');
    expect(await checkDoneClaim('Saved to ../escape.md', dir)).toMatch(/outside the project/);
  });

  it('counts JSON array entries', async () => {
    const dir = await project({ 'data.json': JSON.stringify({ items: [1, 2, 3, 4] }) });
    expect(await checkDoneClaim('4 records in data.json', dir)).toBeUndefined();
  });
});

describe('the /al usage and prompt', () => {
  it('carries "Iteration N of max" and names the temp file and the rename of the write protocol', () => {
    const state = { ...initialAlState('list the fruits'), status: 'in_progress' as const, iteration: 4 };
    const prompt = stateFilePrompt(state, { path: '/p/work/.al-state.json' }, '/p', 7);
    expect(prompt).toContain('Goal: list the fruits\nState file: work/.al-state.json\nIteration: 4 of 7\n');
    expect(prompt).toContain(
      'write the whole JSON to work/.al-state.tmp first, then rename work/.al-state.tmp to work/.al-state.json',
    );
    expect(stateTempFile('/p/custom/state.json')).toBe('/p/custom/state.tmp');
  });
});

import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkHarness } from '@allium-loop/verify';
import { describe, expect, it } from 'vitest';
import { fingerprintCommand } from './command-fingerprint.js';

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'modes-fingerprint-'));
  for (const [path, content] of Object.entries(files)) await writeFile(join(dir, path), content);
  return dir;
}

describe('fingerprintCommand', () => {
  it('covers the project files the command runs and the package script behind it, not what it only reads', async () => {
    const dir = await project({
      'check.sh': 'exit 1\n',
      'done.txt': 'the work itself\n',
      'package.json': '{"scripts":{"test":"vitest run"}}',
    });
    const record = await fingerprintCommand(
      'sh ./check.sh && test -f done.txt && npm test -- --reporter=dot',
      dir,
    );
    expect(record.entries.map((e) => e.label)).toEqual(
      expect.arrayContaining(['check.sh', 'package.json scripts.test', 'allium-loop.yaml']),
    );
    expect(record.entries.map((e) => e.label)).not.toContain('done.txt');
    await writeFile(join(dir, 'check.sh'), 'exit 0\n');
    await writeFile(join(dir, 'done.txt'), 'done\n');
    await writeFile(join(dir, 'package.json'), '{"scripts":{"test":"true"}}');
    expect((await checkHarness(dir, record)).changed.map((e) => e.label).sort()).toEqual([
      'check.sh',
      'package.json scripts.test',
    ]);
    expect(await readFile(join(dir, 'done.txt'), 'utf8')).toBe('done\n');
  });

  it.each([
    ['pnpm run lint', 'lint'],
    ['yarn bench', 'bench'],
    ['npm t', 'test'],
  ])('%s names the package script %s', async (command, script) => {
    const dir = await project({ 'package.json': `{"scripts":{"${script}":"x"}}` });
    expect((await fingerprintCommand(command, dir)).entries.map((e) => e.label)).toContain(
      `package.json scripts.${script}`,
    );
  });
});

import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { changedFingerprint, executedScripts, fingerprintCommand } from './command-fingerprint.js';

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'modes-fingerprint-'));
  for (const [path, content] of Object.entries(files)) await writeFile(join(dir, path), content);
  return dir;
}

describe('fingerprintCommand', () => {
  it('covers the command, the project files it names and the package script it runs', async () => {
    const dir = await project({
      'check.sh': 'exit 1\n',
      'package.json': '{"scripts":{"test":"vitest run"}}',
    });
    const before = await fingerprintCommand('sh ./check.sh && npm test -- --reporter=dot', dir);
    expect(Object.keys(before).sort()).toEqual(['command', 'file:check.sh', 'npm script:test']);
    await writeFile(join(dir, 'check.sh'), 'exit 0\n');
    await writeFile(join(dir, 'package.json'), '{"scripts":{"test":"true"}}');
    const after = await fingerprintCommand('sh ./check.sh && npm test -- --reporter=dot', dir);
    expect(changedFingerprint(before, after)).toEqual(['file:check.sh', 'npm script:test']);
  });

  it.each([
    ['pnpm run lint', 'lint'],
    ['yarn bench', 'bench'],
    ['npm t', 'test'],
  ])('%s names the package script %s', async (command, script) => {
    const dir = await project({ 'package.json': `{"scripts":{"${script}":"x"}}` });
    expect(Object.keys(await fingerprintCommand(command, dir))).toContain(`npm script:${script}`);
  });

  it('ignores files outside the project, missing scripts and files the command only reads', async () => {
    const dir = await project({ 'done.txt': 'the work itself\n' });
    const fingerprint = await fingerprintCommand('/etc/x.sh; ../up.sh; ./missing.sh; test -f done.txt', dir);
    expect(Object.keys(fingerprint)).toEqual(['command']);
    expect(changedFingerprint({ command: 'a' }, { command: 'a', 'file:new.sh': 'b' })).toEqual([]);
  });

  it.each([
    ['./check.sh && npm test', ['./check.sh', 'npm']],
    ['CI=1 python3 -u score.py | tail -1', ['score.py', 'tail']],
    ["sh 'check.sh'; node --expose-gc bench.mjs", ['check.sh', 'bench.mjs']],
  ])('executedScripts(%j)', (command, scripts) => {
    expect(executedScripts(command)).toEqual(scripts);
  });
});

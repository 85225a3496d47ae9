import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AlliumLoopError } from '@allium-loop/errors';
import { describe, expect, it } from 'vitest';
import { readTestCommandConfig, writeTestCommandConfig } from './test-command-config.js';

const dir = () => mkdtemp(join(tmpdir(), 'verify-config-'));

describe('testCommand in allium-loop.yaml', () => {
  it('is undefined without a file or a key', async () => {
    const cwd = await dir();
    expect(await readTestCommandConfig(cwd)).toBeUndefined();
    await writeFile(join(cwd, 'allium-loop.yaml'), 'agent: claude\n');
    expect(await readTestCommandConfig(cwd)).toBeUndefined();
  });

  it('writes into a new file, then reads it back', async () => {
    const cwd = await dir();
    await writeTestCommandConfig(cwd, 'npm run test:ci');
    expect(await readFile(join(cwd, 'allium-loop.yaml'), 'utf8')).toBe('testCommand: npm run test:ci\n');
    expect(await readTestCommandConfig(cwd)).toBe('npm run test:ci');
  });

  it('preserves other keys and comments, and replaces an old value', async () => {
    const cwd = await dir();
    const original = '# project settings\nagent: claude # the default\ntestCommand: old\ncaps:\n  ticks: 6\n';
    await writeFile(join(cwd, 'allium-loop.yaml'), original);
    await writeTestCommandConfig(cwd, 'make test');
    expect(await readFile(join(cwd, 'allium-loop.yaml'), 'utf8')).toBe(
      '# project settings\nagent: claude # the default\ntestCommand: make test\ncaps:\n  ticks: 6\n',
    );
  });

  it.each([
    ['invalid YAML', 'testCommand: [unclosed\n'],
    ['a non-string value', 'testCommand: 42\n'],
    ['an empty string', "testCommand: ''\n"],
  ])('rejects %s with verify.config_invalid', async (_name, text) => {
    const cwd = await dir();
    await writeFile(join(cwd, 'allium-loop.yaml'), text);
    const error: unknown = await readTestCommandConfig(cwd).catch((caught: unknown) => caught);
    expect(AlliumLoopError.is(error) && error.code).toBe('verify.config_invalid');
  });

  it('refuses to write into a file that is not a mapping', async () => {
    const cwd = await dir();
    await writeFile(join(cwd, 'allium-loop.yaml'), '- a\n- b\n');
    const error: unknown = await writeTestCommandConfig(cwd, 'x').catch((caught: unknown) => caught);
    expect(AlliumLoopError.is(error) && error.code).toBe('verify.config_invalid');
    expect(await readFile(join(cwd, 'allium-loop.yaml'), 'utf8')).toBe('- a\n- b\n');
  });
});

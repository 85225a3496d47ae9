import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ConfigSchema } from './config-schema.js';
import { loadConfig } from './load-config.js';

async function project(yaml?: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'config-'));
  if (yaml !== undefined) await writeFile(join(dir, 'allium-loop.yaml'), yaml);
  return dir;
}

describe('loadConfig', () => {
  it('reads a valid file', async () => {
    const result = await loadConfig(
      await project(
        'testCommand: node --test\ncaps:\n  maxTicks: 4\nagent:\n  kind: claude\n  model: sonnet\n',
      ),
    );
    expect(result).toEqual({
      ok: true,
      value: {
        testCommand: 'node --test',
        caps: { maxTicks: 4 },
        agent: { kind: 'claude', model: 'sonnet' },
      },
    });
  });

  it('treats an absent file as an empty config', async () => {
    expect(await loadConfig(await project())).toEqual({ ok: true, value: {} });
  });

  it('names an unknown key with its path, and keeps the file as it was', async () => {
    const yaml = 'caps:\n  maxTick: 4\n';
    const dir = await project(yaml);
    const result = await loadConfig(dir);
    expect(result.ok).toBe(false);
    if (!result.ok)
      expect(result.issues.join('\n')).toMatch(/allium-loop\.yaml: caps: Unrecognized key: "maxTick"/);
    expect(await readFile(join(dir, 'allium-loop.yaml'), 'utf8')).toBe(yaml);
  });

  it('reports YAML syntax errors', async () => {
    const result = await loadConfig(await project('caps: [unclosed\n'));
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.issues[0]).toContain('allium-loop.yaml');
  });

  it('the committed JSON Schema matches the zod schema (regenerate with the docs script when this fails)', async () => {
    const committed = JSON.parse(
      await readFile(new URL('../../../../docs/schemas/config.schema.json', import.meta.url), 'utf8'),
    ) as unknown;
    expect(committed).toEqual(
      JSON.parse(JSON.stringify(z.toJSONSchema(ConfigSchema, { unrepresentable: 'any' }))),
    );
  });
});

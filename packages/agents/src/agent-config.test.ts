import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AlliumLoopError } from '@allium-loop/errors';
import { agentConfigSchema, createAgentRunner, parseAgentConfig } from './agent-config.js';

describe('agent configuration', () => {
  it.each([
    { kind: 'claude', model: 'opus', permissionMode: 'acceptEdits', maxTurns: 30 },
    { kind: 'codex', sandbox: 'workspace-write', model: 'gpt-5' },
    { kind: 'gemini', approvalMode: 'yolo' },
    { kind: 'aider', model: 'sonnet', files: ['src/a.ts'] },
    { kind: 'opencode', model: 'anthropic/claude-sonnet-4' },
    { kind: 'command', argv: ['my-agent', '--prompt', '{prompt_file}'] },
    { kind: 'replay', script: 'examples/demo/replay.json' },
  ])('builds a runner for $kind', (config) => {
    expect(createAgentRunner(config).name).toBe(config.kind);
  });

  it('lists every issue of an invalid config in one typed error', () => {
    const error: unknown = (() => {
      try {
        createAgentRunner({ kind: 'claude', permissionMode: 'yes-please', maxTurns: -1, colour: 'red' });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(AlliumLoopError.is(error)).toBe(true);
    expect((error as AlliumLoopError).code).toBe('agents.invalid_config');
    const message = (error as Error).message;
    expect(message).toContain('permissionMode');
    expect(message).toContain('maxTurns');
    expect(message).toContain('colour');
  });

  it('rejects an unknown kind and a price table with negative prices', () => {
    expect(parseAgentConfig({ kind: 'copilot' }).ok).toBe(false);
    expect(
      parseAgentConfig({ kind: 'codex', prices: { 'gpt-5': { inputPerMTok: -1, outputPerMTok: 1 } } }).ok,
    ).toBe(false);
  });

  it('converts to JSON Schema', () => {
    const schema = z.toJSONSchema(agentConfigSchema) as { anyOf?: unknown[]; oneOf?: unknown[] };
    expect((schema.oneOf ?? schema.anyOf)?.length).toBe(7);
  });
});

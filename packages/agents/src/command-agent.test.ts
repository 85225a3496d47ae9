import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandOptionsSchema, createCommandAgentRunner, substituteCommandArgs } from './command-agent.js';
import {
  describeAgentRunner,
  FAKE_AGENTS_DIR,
  type RunnerSetup,
} from './describe-agent-runner.test-helpers.js';

// Any executable will do: here the fake aider, given the prompt file through a placeholder.
const create = (setup: RunnerSetup) =>
  createCommandAgentRunner(
    {
      kind: 'command',
      argv: [join(FAKE_AGENTS_DIR, 'aider'), '--message-file', '{prompt_file}', '--phase={phase}'],
      envAllow: [...setup.envAllow, 'OPENAI_API_KEY'],
      killGraceMs: setup.killGraceMs,
      ...(setup.binary === undefined ? {} : { binary: setup.binary }),
    },
    { env: setup.env },
  );

describeAgentRunner({
  name: 'command',
  create,
  authEnv: 'OPENAI_API_KEY',
  hasFinalResult: false,
  expectedUsage: { costUsd: undefined, tokens: undefined },
});

describe('substituteCommandArgs', () => {
  const request = {
    prompt: 'p',
    cwd: '/my repo',
    phase: 'weed',
    resultFile: "/r/it's.json",
    timeoutMs: 1,
  } as const;
  it('substitutes inside elements and never splits one', () => {
    expect(
      substituteCommandArgs(['agent', '{prompt_file}', '--out={result_file}', '{cwd}', '{phase}'], request, {
        promptFile: '/t/prompt file.md',
        scratchDir: '/t',
      }),
    ).toEqual(['agent', '/t/prompt file.md', "--out=/r/it's.json", '/my repo', 'weed']);
  });

  it('rejects unknown placeholders in the configuration', () => {
    const parsed = commandOptionsSchema.safeParse({ kind: 'command', argv: ['x', '{prompt}'] });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain('unknown placeholder {prompt}');
  });
});

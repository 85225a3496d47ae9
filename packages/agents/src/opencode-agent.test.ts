import { describe, expect, it } from 'vitest';
import { buildOpencodeArgs, createOpencodeAgentRunner } from './opencode-agent.js';
import {
  describeAgentRunner,
  prepareFakeCall,
  type RunnerSetup,
} from './describe-agent-runner.test-helpers.js';

const create = (setup: RunnerSetup) =>
  createOpencodeAgentRunner(
    {
      kind: 'opencode',
      envAllow: setup.envAllow,
      killGraceMs: setup.killGraceMs,
      ...(setup.binary === undefined ? {} : { binary: setup.binary }),
    },
    { env: setup.env },
  );

describeAgentRunner({
  name: 'opencode',
  create,
  authEnv: 'ANTHROPIC_API_KEY',
  hasFinalResult: true,
  expectedUsage: { costUsd: 0.0042, tokens: { input: 900, output: 150, cacheRead: 300, cacheWrite: 0 } },
});

describe('buildOpencodeArgs', () => {
  it('runs with json events and attaches the prompt file', () => {
    expect(
      buildOpencodeArgs(
        { kind: 'opencode', model: 'anthropic/claude-sonnet-4', agent: 'build' },
        { promptFile: '/s/prompt.md', scratchDir: '/s' },
      ),
    ).toEqual([
      'run',
      'Carry out the task in the attached file.',
      '--format',
      'json',
      '-m',
      'anthropic/claude-sonnet-4',
      '--agent',
      'build',
      '-f',
      '/s/prompt.md',
    ]);
  });
});

describe('opencode adapter against the fake CLI', () => {
  it.each([
    ['is-error-success', 'api_error'],
    ['rate-limited', 'rate_limited'],
  ] as const)('%s → %s', async (behaviour, outcome) => {
    const call = await prepareFakeCall({ behaviour, create, authEnv: 'ANTHROPIC_API_KEY' });
    expect((await call.runner.run(call.request)).outcome).toBe(outcome);
  });
});

import { describe, expect, it } from 'vitest';
import { buildCodexArgs, createCodexAgentRunner } from './codex-agent.js';
import {
  describeAgentRunner,
  prepareFakeCall,
  type RunnerSetup,
} from './describe-agent-runner.test-helpers.js';

const create = (setup: RunnerSetup, extra: Record<string, unknown> = {}) =>
  createCodexAgentRunner(
    {
      kind: 'codex',
      model: 'gpt-5',
      envAllow: setup.envAllow,
      killGraceMs: setup.killGraceMs,
      ...(setup.binary === undefined ? {} : { binary: setup.binary }),
      ...extra,
    },
    { env: setup.env },
  );

// 1000 uncached input at $1.25/M, 200 cached at $0.125/M, 300 output at $10/M.
const expectedCost = (1000 * 1.25 + 200 * 0.125 + 300 * 10) / 1e6;

describeAgentRunner({
  name: 'codex',
  create,
  authEnv: 'OPENAI_API_KEY',
  hasFinalResult: true,
  expectedUsage: { costUsd: expectedCost, tokens: { input: 1000, cacheRead: 200, output: 300 } },
});

const request = {
  prompt: 'p',
  cwd: '/work/repo',
  phase: 'implement',
  resultFile: '/tmp/r.json',
  timeoutMs: 1,
} as const;
const files = { promptFile: '/tmp/s/prompt.md', scratchDir: '/tmp/s' };

describe('buildCodexArgs', () => {
  it('runs exec --json in the cwd with a sandbox, the last message file and the prompt on stdin', () => {
    expect(buildCodexArgs({ kind: 'codex', model: 'gpt-5' }, request, files)).toEqual([
      'exec',
      '--json',
      '--color',
      'never',
      '-C',
      '/work/repo',
      '--sandbox',
      'workspace-write',
      '-m',
      'gpt-5',
      '--output-last-message',
      '/tmp/s/last-message.txt',
      '-',
    ]);
  });

  it('bypasses the sandbox and the git check only when asked', () => {
    const args = buildCodexArgs(
      { kind: 'codex', bypassSandbox: true, skipGitRepoCheck: true },
      request,
      files,
    );
    expect(args).toContain('--dangerously-bypass-approvals-and-sandbox');
    expect(args).toContain('--skip-git-repo-check');
    expect(args).not.toContain('--sandbox');
  });
});

describe('codex adapter against the fake CLI', () => {
  it('leaves the cost unknown when no model is configured, but still reports tokens', async () => {
    const call = await prepareFakeCall({
      behaviour: 'success',
      create: (s) => create(s, { model: undefined }),
      authEnv: 'OPENAI_API_KEY',
    });
    const result = await call.runner.run(call.request);
    expect(result.costUsd).toBeUndefined();
    expect(result.tokens).toEqual({ input: 1000, cacheRead: 200, output: 300 });
  });

  it('prices with an overriding price table', async () => {
    const prices = { 'gpt-5': { inputPerMTok: 1, outputPerMTok: 1, cacheReadPerMTok: 1 } };
    const call = await prepareFakeCall({
      behaviour: 'success',
      create: (s) => create(s, { prices }),
      authEnv: 'OPENAI_API_KEY',
    });
    expect((await call.runner.run(call.request)).costUsd).toBeCloseTo(1500 / 1e6, 12);
  });

  it.each([
    ['is-error-success', 'api_error'],
    ['rate-limited', 'rate_limited'],
  ] as const)('%s → %s, and the last message lands in the transcript', async (behaviour, outcome) => {
    const call = await prepareFakeCall({ behaviour, create, authEnv: 'OPENAI_API_KEY' });
    const result = await call.runner.run(call.request);
    expect(result.outcome).toBe(outcome);
    expect(result.detail).toBeDefined();
  });

  it('copies the last message into the transcript', async () => {
    const call = await prepareFakeCall({ behaviour: 'success', create, authEnv: 'OPENAI_API_KEY' });
    const result = await call.runner.run(call.request);
    const { readFile } = await import('node:fs/promises');
    expect(await readFile(result.transcriptPath, 'utf8')).toContain('All done: greeting implemented.');
    expect(result.sessionId).toBe('fake-codex-thread');
    // The final message is the last agent_message item.
    expect(result.finalText).toBe('All done.');
  });
});

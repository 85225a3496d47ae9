import { describe, expect, it } from 'vitest';
import { buildAiderArgs, createAiderAgentRunner, createAiderParser, parseAiderCount } from './aider-agent.js';
import { describeAgentRunner, type RunnerSetup } from './describe-agent-runner.test-helpers.js';
import type { ProcessRunResult } from './process-runner.js';

const create = (setup: RunnerSetup) =>
  createAiderAgentRunner(
    {
      kind: 'aider',
      envAllow: setup.envAllow,
      killGraceMs: setup.killGraceMs,
      ...(setup.binary === undefined ? {} : { binary: setup.binary }),
    },
    { env: setup.env },
  );

describeAgentRunner({
  name: 'aider',
  create,
  authEnv: 'OPENAI_API_KEY',
  hasFinalResult: false,
  expectedUsage: { costUsd: 0.02, tokens: { input: 1200, output: 300 } },
});

describe('buildAiderArgs', () => {
  it('passes the prompt file, never commits, and adds chat files last', () => {
    expect(
      buildAiderArgs(
        { kind: 'aider', model: 'sonnet', files: ['src/a.ts'] },
        { promptFile: '/s/prompt.md', scratchDir: '/s' },
      ),
    ).toEqual([
      '--message-file',
      '/s/prompt.md',
      '--yes-always',
      '--no-auto-commits',
      '--no-stream',
      '--no-pretty',
      '--model',
      'sonnet',
      'src/a.ts',
    ]);
  });
});

describe('aider output', () => {
  it.each([
    ['300', 300],
    ['1.2k', 1200],
    ['2M', 2_000_000],
    ['x', undefined],
  ])('parses the count %s', (text, value) => {
    expect(parseAiderCount(text)).toBe(value);
  });

  it('sums tokens over messages, takes the last session cost, and reads cache counts', () => {
    const parser = createAiderParser();
    parser.onLine('Tokens: 1k sent, 200 received. Cost: $0.01 message, $0.01 session.');
    parser.onLine('Tokens: 2k sent, 500 cache hit, 100 received. Cost: $0.02 message, $0.03 session.');
    const report = parser.finish({} as ProcessRunResult);
    expect(report).toMatchObject({ costUsd: 0.03, tokens: { input: 3000, output: 300, cacheRead: 500 } });
  });

  it('leaves the cost unknown when aider printed none', () => {
    const parser = createAiderParser();
    parser.onLine('Tokens: 1k sent, 200 received.');
    const report = parser.finish({} as ProcessRunResult);
    expect(report.costUsd).toBeUndefined();
    expect(report.tokens).toEqual({ input: 1000, output: 200 });
  });
});

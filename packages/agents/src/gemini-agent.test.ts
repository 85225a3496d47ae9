import { describe, expect, it } from 'vitest';
import { buildGeminiArgs, createGeminiAgentRunner } from './gemini-agent.js';
import {
  describeAgentRunner,
  prepareFakeCall,
  type RunnerSetup,
} from './describe-agent-runner.test-helpers.js';

const create = (setup: RunnerSetup) =>
  createGeminiAgentRunner(
    {
      kind: 'gemini',
      envAllow: setup.envAllow,
      killGraceMs: setup.killGraceMs,
      ...(setup.binary === undefined ? {} : { binary: setup.binary }),
    },
    { env: setup.env },
  );

// gemini-2.5-pro: 1000 uncached prompt at $1.25/M, 200 cached at $0.31/M, 300 candidates + 100 thoughts at $10/M.
const expectedCost = (1000 * 1.25 + 200 * 0.31 + 400 * 10) / 1e6;

describeAgentRunner({
  name: 'gemini',
  create,
  authEnv: 'GEMINI_API_KEY',
  hasFinalResult: true,
  expectedUsage: { costUsd: expectedCost, tokens: { input: 1000, cacheRead: 200, output: 400 } },
});

describe('buildGeminiArgs', () => {
  it('runs headless with json output and an approval mode; the prompt is on stdin', () => {
    expect(buildGeminiArgs({ kind: 'gemini', model: 'gemini-2.5-flash', approvalMode: 'yolo' })).toEqual([
      '-p',
      'Carry out the task described above.',
      '-o',
      'json',
      '--approval-mode',
      'yolo',
      '-m',
      'gemini-2.5-flash',
    ]);
  });
});

describe('gemini adapter against the fake CLI', () => {
  it.each([
    ['max-turns', 'max_turns'],
    ['is-error-success', 'api_error'],
    ['rate-limited', 'rate_limited'],
  ] as const)('%s → %s', async (behaviour, outcome) => {
    const call = await prepareFakeCall({ behaviour, create, authEnv: 'GEMINI_API_KEY' });
    const result = await call.runner.run(call.request);
    expect(result.outcome).toBe(outcome);
    if (behaviour === 'max-turns') expect(result.exitCode).toBe(53);
  });

  it('reports the response as the final message', async () => {
    const call = await prepareFakeCall({ behaviour: 'success', create, authEnv: 'GEMINI_API_KEY' });
    const result = await call.runner.run(call.request);
    expect(result.outcome).toBe('ok');
    expect(result.finalText).toBe('Done.');
  });
});

import { readFile } from 'node:fs/promises';
import { REDACTED } from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import { buildClaudeArgs, claudeOutcome, createClaudeAgentRunner } from './claude-agent.js';
import {
  describeAgentRunner,
  prepareFakeCall,
  UNRELATED_SECRET,
  type RunnerSetup,
} from './describe-agent-runner.test-helpers.js';

const create = (setup: RunnerSetup, extra: Record<string, unknown> = {}) =>
  createClaudeAgentRunner(
    {
      kind: 'claude',
      envAllow: setup.envAllow,
      killGraceMs: setup.killGraceMs,
      ...(setup.binary === undefined ? {} : { binary: setup.binary }),
      ...extra,
    },
    { env: setup.env },
  );

describeAgentRunner({
  name: 'claude',
  create,
  authEnv: 'ANTHROPIC_API_KEY',
  hasFinalResult: true,
  expectedUsage: { costUsd: 0.0123, tokens: { input: 100, output: 50, cacheRead: 1000, cacheWrite: 10 } },
});

const request = {
  prompt: 'p',
  cwd: '/tmp',
  phase: 'implement',
  resultFile: '/tmp/r.json',
  timeoutMs: 1,
} as const;

describe('buildClaudeArgs', () => {
  it('builds print mode with stream-json, permission mode, limits and the remaining budget', () => {
    expect(
      buildClaudeArgs(
        { kind: 'claude', model: 'opus', maxTurns: 12, permissionMode: 'plan' },
        { ...request, budgetUsd: 1.234 },
      ),
    ).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'plan',
      '--model',
      'opus',
      '--max-turns',
      '12',
      '--max-budget-usd',
      '1.23',
    ]);
  });

  it('uses json without --verbose when asked, and never puts the prompt in argv', () => {
    const args = buildClaudeArgs(
      { kind: 'claude', outputFormat: 'json' },
      { ...request, prompt: 'SECRET PROMPT' },
    );
    expect(args).toEqual(['-p', '--output-format', 'json', '--permission-mode', 'acceptEdits']);
  });
});

describe('phaseAgents: allium', () => {
  const base = ['-p', '--output-format', 'json', '--permission-mode', 'acceptEdits'];
  it.each(['distill', 'tend', 'propagate', 'weed'] as const)(
    'runs %s as the official Allium agent (--agent allium:<phase>)',
    (phase) => {
      expect(
        buildClaudeArgs(
          { kind: 'claude', outputFormat: 'json', phaseAgents: 'allium' },
          { ...request, phase },
        ),
      ).toEqual([...base, '--agent', `allium:${phase}`]);
    },
  );

  it.each(['elicit', 'implement'] as const)(
    'runs %s, which the plugin has no agent for, with the own prompt',
    (phase) => {
      expect(
        buildClaudeArgs(
          { kind: 'claude', outputFormat: 'json', phaseAgents: 'allium' },
          { ...request, phase },
        ),
      ).toEqual(base);
    },
  );

  it('names no agent by default or with own', () => {
    const propagate = { ...request, phase: 'propagate' } as const;
    expect(buildClaudeArgs({ kind: 'claude', outputFormat: 'json' }, propagate)).toEqual(base);
    expect(buildClaudeArgs({ kind: 'claude', outputFormat: 'json', phaseAgents: 'own' }, propagate)).toEqual(
      base,
    );
  });
});

describe('claudeOutcome', () => {
  it.each([
    ['success', false, 'ok text', undefined],
    ['success', true, 'API Error: 500', 'api_error'],
    ['error_max_turns', true, '', 'max_turns'],
    ['error_max_budget_usd', true, '', 'max_budget'],
    ['error_during_execution', false, '', 'failed'],
    ['success', true, 'Claude AI usage limit reached|1893456000', 'rate_limited'],
  ] as const)('%s is_error=%s %s → %s', (subtype, isError, text, outcome) => {
    expect(claudeOutcome(subtype, isError, text)).toBe(outcome);
  });
});

describe('claude adapter outcomes against the fake CLI', () => {
  it.each([
    ['is-error-success', 'api_error'],
    ['over-budget', 'max_budget'],
    ['max-turns', 'max_turns'],
    ['rate-limited', 'rate_limited'],
  ] as const)('%s → %s', async (behaviour, outcome) => {
    const call = await prepareFakeCall({ behaviour, create, authEnv: 'ANTHROPIC_API_KEY' });
    const result = await call.runner.run(call.request);
    expect(result.outcome).toBe(outcome);
    expect(result.costUsd).toBe(0.0123);
    if (outcome === 'rate_limited') expect(result.rateLimitResetAt).toBe(1893456000 * 1000);
  });

  it('reads the same result in json mode', async () => {
    const call = await prepareFakeCall({
      behaviour: 'success',
      create: (s) => create(s, { outputFormat: 'json' }),
      authEnv: 'ANTHROPIC_API_KEY',
    });
    const result = await call.runner.run(call.request);
    expect(result).toMatchObject({
      outcome: 'ok',
      turns: 3,
      sessionId: 'fake-claude-session',
      costUsd: 0.0123,
    });
  });

  it.each(['stream-json', 'json'] as const)(
    'reports the final message (%s) as finalText, redacted: where an official agent returns its record',
    async (outputFormat) => {
      const record = { verdict: 'clean', divergences: [], summary: `checked with ${UNRELATED_SECRET.value}` };
      const resultText = `Weed is done.\n\n\`\`\`json\n${JSON.stringify(record)}\n\`\`\``;
      const call = await prepareFakeCall({
        behaviour: 'success',
        create: (s) => create(s, { outputFormat, phaseAgents: 'allium' }),
        authEnv: 'ANTHROPIC_API_KEY',
        extraScenario: { resultText },
      });
      const result = await call.runner.run({ ...call.request, phase: 'weed' });
      expect(result.outcome).toBe('ok');
      expect(result.finalText).toBe(resultText.replace(UNRELATED_SECRET.value, REDACTED));
      expect(result.finalText).not.toContain(UNRELATED_SECRET.value);
      const recorded = JSON.parse(await readFile(call.recordFile, 'utf8')) as { argv: string[] };
      expect(recorded.argv).toEqual(expect.arrayContaining(['--agent', 'allium:weed']));
    },
  );
});

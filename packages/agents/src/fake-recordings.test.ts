import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseJsonLines, readRecording, shapeDrift, type RecordingName } from '@allium-loop/scripted-model';
import { describe, expect, it } from 'vitest';
import { createClaudeParser } from './claude-agent.js';
import { createCodexParser } from './codex-agent.js';
import { FAKE_AGENTS_DIR } from './describe-agent-runner.test-helpers.js';
import { DEFAULT_PRICE_TABLE } from './price-table.js';
import type { ProcessRunResult } from './process-runner.js';

const exec = promisify(execFile);

/**
 * Each fake CLI is checked against a recording of the pinned real binary's output (tools/fake-agents/recordings,
 * re-recorded by packages/cli/src/real-agents/recordings-real-cli.test.ts with UPDATE_RECORDINGS=1): every field
 * a fake prints must exist in the real output with the same JSON type, so a fake cannot drift from the real thing.
 */
const CASES: { recording: RecordingName; fake: string; args: string[]; required: string[] }[] = [
  {
    recording: 'claude-stream-json.jsonl',
    fake: 'claude',
    args: ['-p', '--output-format', 'stream-json', '--verbose'],
    required: ['system/init', 'assistant', 'result/success'],
  },
  { recording: 'claude-json.jsonl', fake: 'claude', args: ['-p', '--output-format', 'json'], required: ['result/success'] },
  {
    recording: 'codex-json.jsonl',
    fake: 'codex',
    args: ['exec', '--json', '-'],
    required: ['thread.started', 'turn.completed', 'item.completed/agent_message'],
  },
];

async function runFake(fake: string, args: string[]): Promise<string> {
  const child = exec(process.execPath, [join(FAKE_AGENTS_DIR, fake), ...args], {
    env: { PATH: process.env['PATH'] ?? '' },
    maxBuffer: 16 * 1024 * 1024,
  });
  child.child.stdin?.end('a prompt');
  return (await child).stdout;
}

const NO_RUN = {} as ProcessRunResult;

describe('the fake CLIs against recordings of the real ones', () => {
  for (const { recording, fake, args, required } of CASES) {
    it(`${fake} ${args.join(' ')}: prints nothing the real CLI does not (${recording})`, async () => {
      const fakeEvents = parseJsonLines(await runFake(fake, args));
      expect(shapeDrift(fakeEvents, readRecording(recording), required)).toEqual([]);
    });
  }

  it('the adapters read the recordings as they read the fakes: session, turns, tokens, cost', () => {
    const claude = createClaudeParser();
    for (const event of readRecording('claude-stream-json.jsonl')) claude.onLine(JSON.stringify(event));
    const claudeReport = claude.finish(NO_RUN);
    expect(claudeReport.finalResult).toBe('present');
    expect(claudeReport.sessionId).toBeDefined();
    expect(claudeReport.costUsd).toBeGreaterThan(0);
    expect(claudeReport.tokens?.input).toBeGreaterThan(0);
    expect(claudeReport.turns).toBeGreaterThan(0);
    expect(claudeReport.outcome).toBeUndefined();

    const codex = createCodexParser('gpt-5', DEFAULT_PRICE_TABLE);
    for (const event of readRecording('codex-json.jsonl')) codex.onLine(JSON.stringify(event));
    const codexReport = codex.finish(NO_RUN);
    expect(codexReport.finalResult).toBe('present');
    expect(codexReport.sessionId).toBeDefined();
    expect(codexReport.tokens?.input).toBeGreaterThan(0);
    expect(codexReport.costUsd).toBeGreaterThan(0);
    expect(codexReport.outcome).toBeUndefined();
  });

  it('the drift check fails when a fake prints a field or a type the real CLI does not', () => {
    const real = readRecording('claude-json.jsonl');
    const drifted = real.map((e) => ({ ...e, total_cost: 1, num_turns: 'three' }));
    const problems = shapeDrift(drifted, real, ['result/success']);
    expect(problems.some((p) => p.includes('total_cost'))).toBe(true);
    expect(problems.some((p) => p.includes('num_turns is string'))).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { createClaudeParser } from './claude-agent.js';
import { createCodexParser } from './codex-agent.js';
import { DEFAULT_PRICE_TABLE } from './price-table.js';
import type { ProcessRunResult } from './process-runner.js';

const NO_RUN = {} as ProcessRunResult;

describe('a refused key is an api_error that names the CLI’s own variable', () => {
  it('claude: api_error_status 401 (as the real 2.1.328 prints it)', () => {
    const parser = createClaudeParser();
    parser.onLine(
      JSON.stringify({
        type: 'result',
        subtype: 'success',
        is_error: true,
        api_error_status: 401,
        result: 'Invalid API key · Fix external API key',
        session_id: 's',
        total_cost_usd: 0,
      }),
    );
    const report = parser.finish(NO_RUN);
    expect(report.outcome).toBe('api_error');
    expect(report.authFailure).toBe(true);
    expect(report.detail).toContain('ANTHROPIC_API_KEY');
    expect(report.detail).toContain('Invalid API key');
  });

  it('claude: a 429 is rate_limited, a 500 a plain api_error without authFailure', () => {
    for (const [status, outcome] of [
      [429, 'rate_limited'],
      [500, 'api_error'],
    ] as const) {
      const parser = createClaudeParser();
      parser.onLine(
        JSON.stringify({
          type: 'result',
          is_error: true,
          api_error_status: status,
          result: 'API Error',
          session_id: 's',
        }),
      );
      const report = parser.finish(NO_RUN);
      expect(report.outcome).toBe(outcome);
      expect(report.authFailure).toBeUndefined();
    }
  });

  it('codex: turn.failed with 401 Unauthorized (as the real 0.169.0 prints it)', () => {
    const parser = createCodexParser('gpt-5', DEFAULT_PRICE_TABLE);
    parser.onLine(JSON.stringify({ type: 'thread.started', thread_id: 't' }));
    parser.onLine(
      JSON.stringify({
        type: 'turn.failed',
        error: { message: 'unexpected status 401 Unauthorized: invalid key' },
      }),
    );
    const report = parser.finish(NO_RUN);
    expect(report.outcome).toBe('api_error');
    expect(report.authFailure).toBe(true);
    expect(report.detail).toContain('OPENAI_API_KEY');
  });
});

import { describe, expect, it } from 'vitest';
import { createClaudeParser } from './claude-agent.js';
import { createCodexParser } from './codex-agent.js';
import { createGeminiParser } from './gemini-agent.js';
import { DEFAULT_PRICE_TABLE } from './price-table.js';
import type { ProcessRunResult } from './process-runner.js';

const NO_RUN = {} as ProcessRunResult;
const line = (event: Record<string, unknown>): string => JSON.stringify(event);

/** Claude Code 2.1.328's event before it retries a 429 itself (`CLAUDE_CODE_MAX_RETRIES` > 0). */
const claudeRetry = (attempt: number, delayMs: number): string =>
  line({
    type: 'system',
    subtype: 'api_retry',
    attempt,
    max_retries: 2,
    retry_delay_ms: delayMs,
    error_status: 429,
    error: 'rate_limit',
    session_id: 's',
  });

/** Its result line when it gave up on a 429. */
const claudeGaveUp = line({
  type: 'result',
  subtype: 'success',
  is_error: true,
  api_error_status: 429,
  api_error_type: 'rate_limit_error',
  result: 'API Error: Request rejected (429) · Rate limit reached: too many requests.',
  session_id: 's',
  total_cost_usd: 0,
});

describe('a 429 the CLI retried past is no rate limit; one it gave up on is, with the wait it announced', () => {
  it('claude: api_retry then a clean result → ok', () => {
    const parser = createClaudeParser(() => 1_000);
    parser.onLine(claudeRetry(1, 1_078));
    parser.onLine(
      line({ type: 'result', subtype: 'success', is_error: false, result: 'done', session_id: 's' }),
    );
    const report = parser.finish(NO_RUN);
    expect(report.outcome).toBeUndefined();
    expect(report.rateLimitResetAt).toBeUndefined();
  });

  it('claude: gave up after retrying → rate_limited, reset at the result plus its last announced wait', () => {
    const parser = createClaudeParser(() => 50_000);
    parser.onLine(claudeRetry(1, 3_469));
    parser.onLine(claudeRetry(2, 3_131));
    parser.onLine(claudeGaveUp);
    const report = parser.finish(NO_RUN);
    expect(report.outcome).toBe('rate_limited');
    expect(report.rateLimitResetAt).toBe(50_000 + 3_131);
  });

  it('claude: gave up without retrying → rate_limited with no reset time (the engine waits its default)', () => {
    const parser = createClaudeParser(() => 50_000);
    parser.onLine(claudeGaveUp);
    const report = parser.finish(NO_RUN);
    expect(report.outcome).toBe('rate_limited');
    expect(report.rateLimitResetAt).toBeUndefined();
  });

  it('claude: an api_retry for a 500 gives no rate-limit reset', () => {
    const parser = createClaudeParser(() => 50_000);
    parser.onLine(line({ type: 'system', subtype: 'api_retry', retry_delay_ms: 500, error_status: 500 }));
    parser.onLine(claudeGaveUp);
    expect(parser.finish(NO_RUN).rateLimitResetAt).toBeUndefined();
  });

  // Codex 0.169.0 prints an `error` event per retry it makes itself, then either a completed or a failed turn.
  const reconnecting = (n: number): string =>
    line({
      type: 'error',
      message: `Reconnecting... ${String(n)}/2 (exceeded retry limit, last status: 429 Too Many Requests)`,
    });

  it('codex: Reconnecting… then a completed turn → ok, tokens counted', () => {
    const parser = createCodexParser('gpt-5', DEFAULT_PRICE_TABLE);
    parser.onLine(line({ type: 'thread.started', thread_id: 't' }));
    parser.onLine(line({ type: 'turn.started' }));
    parser.onLine(reconnecting(1));
    parser.onLine(
      line({
        type: 'turn.completed',
        usage: { input_tokens: 1200, cached_input_tokens: 0, output_tokens: 80 },
      }),
    );
    const report = parser.finish(NO_RUN);
    expect(report.outcome).toBeUndefined();
    expect(report.detail).toBeUndefined();
    expect(report.tokens).toEqual({ input: 1200, cacheRead: 0, output: 80 });
  });

  it('codex: Reconnecting… then turn.failed → rate_limited with the failure as detail', () => {
    const parser = createCodexParser('gpt-5', DEFAULT_PRICE_TABLE);
    parser.onLine(line({ type: 'thread.started', thread_id: 't' }));
    parser.onLine(reconnecting(1));
    parser.onLine(reconnecting(2));
    parser.onLine(
      line({ type: 'error', message: 'exceeded retry limit, last status: 429 Too Many Requests' }),
    );
    parser.onLine(
      line({
        type: 'turn.failed',
        error: { message: 'exceeded retry limit, last status: 429 Too Many Requests' },
      }),
    );
    const report = parser.finish(NO_RUN);
    expect(report.outcome).toBe('rate_limited');
    expect(report.detail).toBe('exceeded retry limit, last status: 429 Too Many Requests');
  });

  it('codex: an error with no turn after it still fails the call', () => {
    const parser = createCodexParser('gpt-5', DEFAULT_PRICE_TABLE);
    parser.onLine(line({ type: 'thread.started', thread_id: 't' }));
    parser.onLine(line({ type: 'error', message: 'stream disconnected before completion' }));
    expect(parser.finish(NO_RUN).outcome).toBe('api_error');
  });
});

describe('gemini: a 429 it gives up on after its own retries (no JSON on stdout, the error on stderr)', () => {
  /** What Gemini CLI 0.61.0 printed on stderr after ten refused attempts (stack shortened). */
  const STDERR = [
    'Attempt 9 failed: Resource has been exhausted (scripted).',
    'Suggested retry after 1s.. Retrying after 33383ms...',
    'Attempt 10 failed: Resource has been exhausted (scripted).',
    'Suggested retry after 7s.. Max attempts reached',
    'Error when talking to Gemini API Full report available at: /tmp/gemini-client-error.json RetryableQuotaError: Resource has been exhausted (scripted).',
    'Suggested retry after 7s.',
    '    at classifyGoogleError (file:///x/bundle/chunk.js:1:1) {',
    '  cause: {',
    '    code: 429,',
  ].join('\n');
  const run = (stderr: string, exitCode: number): ProcessRunResult =>
    ({
      exitCode,
      stdout: { head: '', tail: '', totalBytes: 0, omittedBytes: 0 },
      stderr: { head: stderr, tail: '', totalBytes: stderr.length, omittedBytes: 0 },
    }) as ProcessRunResult;

  it('is rate_limited, reset at the last suggested delay after the call ended', () => {
    const report = createGeminiParser(DEFAULT_PRICE_TABLE, () => 10_000).finish(run(STDERR, 173));
    expect(report.outcome).toBe('rate_limited');
    expect(report.rateLimitResetAt).toBe(10_000 + 7_000);
    expect(report.detail).toBe('Resource has been exhausted (scripted).');
  });

  it('without a suggested delay the reset is unknown; another failure stays a plain missing report', () => {
    const noDelay = STDERR.split('\n')
      .filter((line) => !line.includes('Suggested'))
      .join('\n');
    expect(createGeminiParser(DEFAULT_PRICE_TABLE).finish(run(noDelay, 1))).toMatchObject({
      outcome: 'rate_limited',
    });
    expect(createGeminiParser(DEFAULT_PRICE_TABLE).finish(run(noDelay, 1)).rateLimitResetAt).toBeUndefined();
    const other = createGeminiParser(DEFAULT_PRICE_TABLE).finish(run('Error: ENOSPC', 1));
    expect(other.outcome).toBeUndefined();
    expect(other.finalResult).toBe('missing');
  });
});

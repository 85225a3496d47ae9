import { z } from 'zod';
import { commonAgentOptionsSchema, resolveCommonOptions, type AgentRuntime } from './agent-options.js';
import {
  buildReport,
  isRateLimitMessage,
  numberOrUndefined,
  objectOrEmpty,
  stringOrUndefined,
  type AgentOutputParser,
  type AgentReport,
} from './agent-report.js';
import type { AgentRunner, AgentRunRequest, TokenUsage } from './agent-runner.js';
import { completeText } from './bounded-capture.js';
import { createCliAgentRunner } from './cli-agent-runner.js';
import { addTokenUsage, compactUsage, priceTokens, type PriceTable } from './price-table.js';
import type { ProcessRunResult } from './process-runner.js';

/** Options of the `gemini` adapter (Gemini CLI headless). */
export const geminiOptionsSchema = commonAgentOptionsSchema.extend({
  kind: z.literal('gemini'),
  model: z.string().min(1).optional(),
  /** `--approval-mode`; default `auto_edit`. Shell commands need `yolo`. */
  approvalMode: z.enum(['default', 'auto_edit', 'yolo', 'plan']).optional(),
  extraArgs: z.array(z.string()).optional(),
});

/** Options of the `gemini` adapter. */
export type GeminiOptions = z.infer<typeof geminiOptionsSchema>;

/** Auth and config variables Gemini CLI reads. */
export const GEMINI_AUTH_ENV = [
  'GEMINI_API_KEY',
  'GOOGLE_API_KEY',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'GOOGLE_CLOUD_PROJECT',
  'GOOGLE_CLOUD_LOCATION',
  'GOOGLE_GENAI_USE_VERTEXAI',
  // The API endpoints (a gateway or proxy), as ANTHROPIC_BASE_URL for claude and OPENAI_BASE_URL for codex.
  'GOOGLE_GEMINI_BASE_URL',
  'GOOGLE_VERTEX_BASE_URL',
];

/** Gemini appends the `-p` text to what it reads on stdin; the prompt itself travels on stdin. */
export const GEMINI_PROMPT_SUFFIX = 'Carry out the task described above.';

/** Gemini CLI's exit code when `model.maxSessionTurns` is reached. */
export const GEMINI_EXIT_TURN_LIMIT = 53;

/** The arguments of one Gemini CLI call. */
export function buildGeminiArgs(options: GeminiOptions): string[] {
  const args = [
    '-p',
    GEMINI_PROMPT_SUFFIX,
    '-o',
    'json',
    '--approval-mode',
    options.approvalMode ?? 'auto_edit',
  ];
  if (options.model !== undefined) args.push('-m', options.model);
  return [...args, ...(options.extraArgs ?? [])];
}

/**
 * Reads Gemini's single JSON object (pretty-printed, last thing on stdout): `session_id`, `error`, and
 * `stats.models.<model>.tokens`, priced per model; exit 53 is `max_turns`. Without that object, a quota error
 * on stderr (see {@link readQuotaFailure}) is `rate_limited`. `now` (epoch ms) dates the reset it suggests.
 */
export function createGeminiParser(prices: PriceTable, now: () => number = Date.now): AgentOutputParser {
  return {
    onLine: () => undefined,
    finish: (run) => {
      if (run.exitCode === GEMINI_EXIT_TURN_LIMIT)
        return buildReport({
          outcome: 'max_turns',
          finalResult: 'not_applicable',
          detail: 'maxSessionTurns reached (exit 53)',
        });
      const body = findFinalJson(run);
      if (body !== undefined) return readGeminiBody(body, prices);
      return readQuotaFailure(run, now) ?? buildReport({ finalResult: 'missing' });
    },
  };
}

function readGeminiBody(body: Record<string, unknown>, prices: PriceTable): AgentReport {
  const error = body['error'];
  const message =
    error === undefined ? undefined : (stringOrUndefined(objectOrEmpty(error)['message']) ?? 'error');
  const code = numberOrUndefined(objectOrEmpty(error)['code']);
  const usage = readGeminiUsage(objectOrEmpty(objectOrEmpty(body['stats'])['models']), prices);
  return buildReport({
    outcome:
      message === undefined
        ? undefined
        : code === 429 || isRateLimitMessage(message)
          ? 'rate_limited'
          : 'api_error',
    finalResult: 'present',
    tokens: usage.tokens,
    costUsd: usage.costUsd,
    sessionId: stringOrUndefined(body['session_id']),
    finalText: stringOrUndefined(body['response']),
    detail: message,
  });
}

/**
 * Gemini CLI 0.61.0 retries a 429 itself (10 attempts, backing off); when it gives up it prints no JSON at all,
 * only `RetryableQuotaError: <message>` (or `TerminalQuotaError`) with `code: 429` on stderr, and
 * `Suggested retry after <n>s.` when the server sent a `RetryInfo` delay: that delay, counted from the end of the
 * call, is the reset time.
 */
function readQuotaFailure(run: ProcessRunResult, now: () => number): AgentReport | undefined {
  if (run.exitCode === 0) return undefined;
  const text = completeText(run.stderr) ?? `${run.stderr.head}\n${run.stderr.tail}`;
  if (!/(?:Retryable|Terminal)QuotaError|\bcode: 429\b/.test(text)) return undefined;
  const delay = [...text.matchAll(/Suggested retry after (\d+(?:\.\d+)?)s/g)].at(-1)?.[1];
  return buildReport({
    outcome: 'rate_limited',
    finalResult: 'missing',
    rateLimitResetAt: delay === undefined ? undefined : now() + Number(delay) * 1000,
    detail: /(?:Retryable|Terminal)QuotaError: ([^\n]+)/.exec(text)?.[1] ?? 'quota exhausted (HTTP 429)',
  });
}

/** Sums tokens over models; the cost is known only when every model has a price. */
function readGeminiUsage(
  models: Record<string, unknown>,
  prices: PriceTable,
): { tokens: TokenUsage | undefined; costUsd: number | undefined } {
  let tokens: TokenUsage | undefined;
  let costUsd: number | undefined = 0;
  for (const [model, stats] of Object.entries(models)) {
    const t = objectOrEmpty(objectOrEmpty(stats)['tokens']);
    const prompt = numberOrUndefined(t['prompt']);
    const cached = numberOrUndefined(t['cached']);
    const candidates = numberOrUndefined(t['candidates']);
    const thoughts = numberOrUndefined(t['thoughts']);
    const usage = compactUsage({
      input: prompt === undefined ? undefined : prompt - (cached ?? 0),
      cacheRead: cached,
      output:
        candidates === undefined && thoughts === undefined ? undefined : (candidates ?? 0) + (thoughts ?? 0),
    });
    tokens = addTokenUsage(tokens, usage);
    const cost = priceTokens(prices, model, usage);
    costUsd = cost === undefined || costUsd === undefined ? undefined : costUsd + cost;
  }
  return { tokens, costUsd: tokens === undefined ? undefined : costUsd };
}

/** The last pretty-printed JSON object on stdout (a line that is just `{` up to the end). */
function findFinalJson(run: ProcessRunResult): Record<string, unknown> | undefined {
  const text = completeText(run.stdout) ?? run.stdout.tail;
  let end = text.length;
  for (let attempt = 0; attempt < 20; attempt += 1) {
    const start = text.lastIndexOf('{', end);
    if (start === -1) return undefined;
    if (start === 0 || text[start - 1] === '\n') {
      const parsed = tryParse(text.slice(start));
      if (parsed !== undefined) return parsed;
    }
    end = start - 1;
  }
  return undefined;
}

function tryParse(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** The `gemini` adapter. */
export function createGeminiAgentRunner(options: GeminiOptions, runtime?: AgentRuntime): AgentRunner {
  const common = resolveCommonOptions(options, runtime);
  return createCliAgentRunner(
    {
      name: 'gemini',
      binary: 'gemini',
      installHint:
        'Install Gemini CLI: npm install -g @google/gemini-cli (then run `gemini` once, or set GEMINI_API_KEY).',
      authEnv: GEMINI_AUTH_ENV,
      buildInvocation: (request: AgentRunRequest) => ({
        args: buildGeminiArgs(options),
        stdin: request.prompt,
      }),
      createParser: () => createGeminiParser(common.prices),
    },
    common,
  );
}

import { z } from 'zod';
import { readClaudeActivity, readClaudeUsage, type ActivityUpdate } from './agent-activity.js';
import type { AgentRuntime } from './agent-options.js';
import { commonAgentOptionsSchema, resolveCommonOptions } from './agent-options.js';
import {
  authFailureDetail,
  buildReport,
  isAuthFailureMessage,
  isRateLimitMessage,
  numberOrUndefined,
  objectOrEmpty,
  parseJsonObject,
  stringOrUndefined,
  type AgentOutputParser,
  type AgentReport,
} from './agent-report.js';
import type { AgentOutcome, AgentRunner, AgentRunRequest } from './agent-runner.js';
import { createCliAgentRunner, type CliAdapterSpec } from './cli-agent-runner.js';

/**
 * Who runs the phases the Allium plugin has agents for: `own` (the engine's prompts only, the default) or
 * `allium` (the plugin's `allium:<phase>` agents). The one list of values and the one default; the CLI's
 * `--phase-agents` flag names the same (a test keeps them equal).
 */
export const PHASE_AGENT_CHOICES = ['own', 'allium'] as const;
/** The default of `phaseAgents`. */
export const DEFAULT_PHASE_AGENTS: (typeof PHASE_AGENT_CHOICES)[number] = 'own';
/** The agent kinds that can run the Allium plugin's agents: Claude Code, by agent name (`--agent allium:<phase>`). */
export const PHASE_AGENT_KINDS: readonly string[] = ['claude'];

/** Options of the `claude` adapter (Claude Code in print mode). */
export const claudeOptionsSchema = commonAgentOptionsSchema.extend({
  kind: z.literal('claude'),
  model: z.string().min(1).optional(),
  /** `--permission-mode`; default `acceptEdits`. */
  permissionMode: z
    .enum(['default', 'acceptEdits', 'plan', 'bypassPermissions', 'auto', 'dontAsk'])
    .optional(),
  /** `--max-turns`. */
  maxTurns: z.number().int().positive().optional(),
  /** `stream-json` (default: live events, the final result is the last line) or `json` (one object at the end). */
  outputFormat: z.enum(['json', 'stream-json']).optional(),
  allowedTools: z.array(z.string().min(1)).optional(),
  disallowedTools: z.array(z.string().min(1)).optional(),
  /** Arguments appended as they are. */
  extraArgs: z.array(z.string()).optional(),
  /**
   * `allium`: run distill, tend, propagate and weed as the official Allium plugin's agents (`--agent allium:<phase>`;
   * the plugin must be installed in Claude Code); elicit and implement, which it has no agent for, and every phase
   * with `own` (the default) run with the engine's own prompt only.
   */
  phaseAgents: z.enum(PHASE_AGENT_CHOICES).optional(),
});

/** The phases the Allium plugin ships an agent for (`allium:<phase>`). */
export const ALLIUM_PLUGIN_PHASES: ReadonlySet<string> = new Set(['distill', 'tend', 'propagate', 'weed']);

/** Options of the `claude` adapter. */
export type ClaudeOptions = z.infer<typeof claudeOptionsSchema>;

/** Auth and config variables Claude Code reads. */
export const CLAUDE_AUTH_ENV = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'ANTHROPIC_BASE_URL',
  'CLAUDE_CONFIG_DIR',
  'CLAUDE_CODE_USE_BEDROCK',
  'CLAUDE_CODE_USE_VERTEX',
  // Switches that keep Claude Code from reaching hosts other than the model API; harmless to pass on.
  'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
  'DISABLE_TELEMETRY',
  'DISABLE_AUTOUPDATER',
  'DISABLE_ERROR_REPORTING',
];

/** What a refused key tells the user to check. */
export const CLAUDE_AUTH_HINT =
  'Check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN / CLAUDE_CODE_OAUTH_TOKEN), or run `claude` once to log in.';

/**
 * The arguments of one Claude Code call; the prompt goes on stdin. `--max-budget-usd` is the request's
 * remaining budget, when it has one.
 */
export function buildClaudeArgs(options: ClaudeOptions, request: AgentRunRequest): string[] {
  const format = options.outputFormat ?? 'stream-json';
  const args = ['-p', '--output-format', format];
  if (format === 'stream-json') args.push('--verbose');
  args.push('--permission-mode', options.permissionMode ?? 'acceptEdits');
  if ((options.phaseAgents ?? DEFAULT_PHASE_AGENTS) === 'allium' && ALLIUM_PLUGIN_PHASES.has(request.phase))
    args.push('--agent', `allium:${request.phase}`);
  if (options.model !== undefined) args.push('--model', options.model);
  if (options.maxTurns !== undefined) args.push('--max-turns', String(options.maxTurns));
  if (request.budgetUsd !== undefined) args.push('--max-budget-usd', request.budgetUsd.toFixed(2));
  if (options.allowedTools !== undefined) args.push('--allowedTools', options.allowedTools.join(','));
  if (options.disallowedTools !== undefined)
    args.push('--disallowedTools', options.disallowedTools.join(','));
  return [...args, ...(options.extraArgs ?? [])];
}

/**
 * Reads Claude's output: the `system/init` event (session id), `system/api_retry` events (the wait Claude Code
 * chose after a 429, from the server's `retry-after`) and the final `result` object, which is the last line in
 * stream-json and the only line in json mode. `now` stamps the result line (epoch ms). `activity` receives the tool
 * calls and usage of the stream-json `assistant` events as they arrive.
 */
export function createClaudeParser(
  now: () => number = Date.now,
  activity?: (update: ActivityUpdate) => void,
): AgentOutputParser {
  let result: Record<string, unknown> | undefined;
  let resultAt = 0;
  let sessionId: string | undefined;
  let retryDelayMs: number | undefined;
  return {
    onLine(line) {
      const event = parseJsonObject(line);
      if (event === undefined) return;
      if (event['type'] === 'result') {
        result = event;
        resultAt = now();
      }
      if (event['type'] === 'system') sessionId ??= stringOrUndefined(event['session_id']);
      if (event['subtype'] === 'api_retry' && event['error_status'] === 429)
        retryDelayMs = numberOrUndefined(event['retry_delay_ms']);
      if (activity === undefined) return;
      const update = readClaudeActivity(event);
      if (update !== undefined) activity(update);
    },
    finish: () =>
      result === undefined
        ? buildReport({ finalResult: 'missing', sessionId })
        : readClaudeResult(
            result,
            sessionId,
            retryDelayMs === undefined ? undefined : resultAt + retryDelayMs,
          ),
  };
}

/**
 * `retryResetAt`: when Claude Code retried a 429 itself before giving up, the end of the last wait it announced
 * (its own reading of `retry-after`) counted from the result line; the best reset time it shows. A usage-limit
 * message's own reset time comes first.
 */
function readClaudeResult(
  result: Record<string, unknown>,
  initSession: string | undefined,
  retryResetAt: number | undefined,
): AgentReport {
  const usage = objectOrEmpty(result['usage']);
  const text = stringOrUndefined(result['result']);
  const apiStatus = numberOrUndefined(result['api_error_status']);
  const statusText = apiStatus === undefined ? (text ?? '') : `${text ?? ''} (HTTP ${String(apiStatus)})`;
  const outcome = claudeOutcome(
    stringOrUndefined(result['subtype']),
    result['is_error'] === true,
    statusText,
  );
  const authFailed = outcome === 'api_error' && isAuthFailureMessage(statusText);
  return buildReport({
    outcome,
    finalResult: 'present',
    costUsd: numberOrUndefined(result['total_cost_usd']) ?? numberOrUndefined(result['total_cost']),
    tokens: readClaudeUsage(usage),
    turns: numberOrUndefined(result['num_turns']),
    sessionId: stringOrUndefined(result['session_id']) ?? initSession,
    rateLimitResetAt: outcome === 'rate_limited' ? (resetTime(text ?? '') ?? retryResetAt) : undefined,
    authFailure: authFailed ? true : undefined,
    finalText: text,
    detail: authFailed
      ? authFailureDetail(statusText, CLAUDE_AUTH_HINT)
      : outcome === undefined
        ? undefined
        : (text?.slice(0, 500) ?? stringOrUndefined(result['subtype'])),
  });
}

/** Maps Claude's result subtype and `is_error` flag to an outcome; `undefined` for a clean success. */
export function claudeOutcome(
  subtype: string | undefined,
  isError: boolean,
  text: string,
): AgentOutcome | undefined {
  if (subtype === 'error_max_turns') return 'max_turns';
  if (subtype === 'error_max_budget_usd') return 'max_budget';
  if (isError) return isRateLimitMessage(text) ? 'rate_limited' : 'api_error';
  if (subtype !== undefined && subtype !== 'success') return 'failed';
  return undefined;
}

function resetTime(text: string): number | undefined {
  // Claude's usage-limit message ends in `|<epoch seconds>`.
  const match = /\|(\d{10})\b/.exec(text);
  return match === null ? undefined : Number(match[1]) * 1000;
}

/** The `claude` adapter. */
export function createClaudeAgentRunner(options: ClaudeOptions, runtime?: AgentRuntime): AgentRunner {
  const spec: CliAdapterSpec = {
    name: 'claude',
    binary: 'claude',
    installHint:
      'Install Claude Code: npm install -g @anthropic-ai/claude-code (then run `claude` once to log in).',
    authEnv: CLAUDE_AUTH_ENV,
    buildInvocation: (request) => ({ args: buildClaudeArgs(options, request), stdin: request.prompt }),
    createParser: (_request, _files, activity) => createClaudeParser(Date.now, activity),
  };
  return createCliAgentRunner(spec, resolveCommonOptions(options, runtime));
}

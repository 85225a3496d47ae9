import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { readCodexActivity, readCodexUsage, type ActivityUpdate } from './agent-activity.js';
import { commonAgentOptionsSchema, resolveCommonOptions, type AgentRuntime } from './agent-options.js';
import {
  authFailureDetail,
  buildReport,
  isAuthFailureMessage,
  isRateLimitMessage,
  objectOrEmpty,
  parseJsonObject,
  stringOrUndefined,
  type AgentOutputParser,
} from './agent-report.js';
import type { AgentOutcome, AgentRunner, AgentRunRequest, TokenUsage } from './agent-runner.js';
import { createCliAgentRunner, type CallFiles } from './cli-agent-runner.js';
import { addTokenUsage, priceTokens, type PriceTable } from './price-table.js';

/** Options of the `codex` adapter (`codex exec`). */
export const codexOptionsSchema = commonAgentOptionsSchema.extend({
  kind: z.literal('codex'),
  /** `-m`; also the key the tokens are priced under (Codex reports no cost and no model name). */
  model: z.string().min(1).optional(),
  /** `--sandbox`; default `workspace-write`. */
  sandbox: z.enum(['read-only', 'workspace-write', 'danger-full-access']).optional(),
  /** `--dangerously-bypass-approvals-and-sandbox` instead of `--sandbox` (only inside an outer sandbox). */
  bypassSandbox: z.boolean().optional(),
  /** `--skip-git-repo-check`, for working directories that are not git repositories. */
  skipGitRepoCheck: z.boolean().optional(),
  extraArgs: z.array(z.string()).optional(),
});

/** Options of the `codex` adapter. */
export type CodexOptions = z.infer<typeof codexOptionsSchema>;

/** Auth and config variables Codex reads. */
export const CODEX_AUTH_ENV = ['OPENAI_API_KEY', 'CODEX_API_KEY', 'CODEX_HOME', 'OPENAI_BASE_URL'];

/** What a refused key tells the user to check. */
export const CODEX_AUTH_HINT =
  'Check OPENAI_API_KEY (or CODEX_API_KEY, or the env_key of your model provider), or run `codex login`.';

const LAST_MESSAGE_FILE = 'last-message.txt';

/** The arguments of one `codex exec` call; the prompt goes on stdin (the `-` argument). */
export function buildCodexArgs(options: CodexOptions, request: AgentRunRequest, files: CallFiles): string[] {
  const args = ['exec', '--json', '--color', 'never', '-C', request.cwd];
  if (options.bypassSandbox === true) args.push('--dangerously-bypass-approvals-and-sandbox');
  else args.push('--sandbox', options.sandbox ?? 'workspace-write');
  if (options.model !== undefined) args.push('-m', options.model);
  args.push('--output-last-message', join(files.scratchDir, LAST_MESSAGE_FILE));
  if (options.skipGitRepoCheck === true) args.push('--skip-git-repo-check');
  return [...args, ...(options.extraArgs ?? []), '-'];
}

/**
 * Reads Codex's JSONL events: `thread.started` (session), `turn.completed` (usage, summed over turns),
 * `turn.failed` and `error` (the failure). Tokens are priced with `prices` under `model`. `activity` receives the
 * items started (commands, file changes, tool calls) and each turn's usage as they arrive.
 */
export function createCodexParser(
  model: string | undefined,
  prices: PriceTable,
  activity?: (update: ActivityUpdate) => void,
): AgentOutputParser {
  let tokens: TokenUsage | undefined;
  let turns = 0;
  let failure: string | undefined;
  /** An `error` event not (yet) followed by a completed turn: Codex prints one per retry it makes itself. */
  let pendingError: string | undefined;
  let sessionId: string | undefined;
  let lastMessage: string | undefined;
  return {
    onLine(line) {
      const event = parseJsonObject(line);
      if (event === undefined) return;
      const type = event['type'];
      if (type === 'thread.started') sessionId = stringOrUndefined(event['thread_id']);
      if (type === 'turn.completed') {
        // Codex got past its own retries ("Reconnecting... 1/5 (… 429 …)"): those errors did not end the call.
        pendingError = undefined;
        turns += 1;
        tokens = addTokenUsage(tokens, readCodexUsage(objectOrEmpty(event['usage'])));
      }
      if (type === 'turn.failed')
        failure = stringOrUndefined(objectOrEmpty(event['error'])['message']) ?? 'turn failed';
      if (type === 'error') pendingError ??= stringOrUndefined(event['message']);
      const item = objectOrEmpty(event['item']);
      if (type === 'item.completed' && item['type'] === 'agent_message')
        lastMessage = stringOrUndefined(item['text']) ?? lastMessage;
      if (activity === undefined) return;
      const update = readCodexActivity(event);
      // Codex names no model in its events: the configured one prices the estimate, as it prices the report.
      if (update !== undefined)
        activity(
          update.usage === undefined || model === undefined
            ? update
            : { ...update, usage: { ...update.usage, model } },
        );
    },
    finish: () => {
      const failed = failure ?? pendingError;
      const outcome: AgentOutcome | undefined =
        failed === undefined ? undefined : isRateLimitMessage(failed) ? 'rate_limited' : 'api_error';
      const authFailed = outcome === 'api_error' && failed !== undefined && isAuthFailureMessage(failed);
      return buildReport({
        outcome,
        finalResult: turns > 0 || failed !== undefined ? 'present' : 'missing',
        tokens,
        costUsd: tokens === undefined ? undefined : priceTokens(prices, model, tokens),
        turns: turns > 0 ? turns : undefined,
        sessionId,
        authFailure: authFailed ? true : undefined,
        finalText: lastMessage,
        detail: authFailed && failed !== undefined ? authFailureDetail(failed, CODEX_AUTH_HINT) : failed,
      });
    },
  };
}

/** The `codex` adapter. */
export function createCodexAgentRunner(options: CodexOptions, runtime?: AgentRuntime): AgentRunner {
  const common = resolveCommonOptions(options, runtime);
  return createCliAgentRunner(
    {
      name: 'codex',
      binary: 'codex',
      installHint:
        'Install Codex CLI: npm install -g @openai/codex (then `codex login`, or set OPENAI_API_KEY).',
      authEnv: CODEX_AUTH_ENV,
      buildInvocation: (request, files) => ({
        args: buildCodexArgs(options, request, files),
        stdin: request.prompt,
      }),
      createParser: (_request, _files, activity) => createCodexParser(options.model, common.prices, activity),
      readSections: async (files) => {
        const text = await readFile(join(files.scratchDir, LAST_MESSAGE_FILE), 'utf8').catch(() => undefined);
        return text === undefined ? {} : { 'last message': text.slice(0, 64 * 1024) };
      },
    },
    common,
  );
}

import { z } from 'zod';
import { commonAgentOptionsSchema, resolveCommonOptions, type AgentRuntime } from './agent-options.js';
import {
  buildReport,
  isRateLimitMessage,
  numberOrUndefined,
  objectOrEmpty,
  parseJsonObject,
  stringOrUndefined,
  type AgentOutputParser,
} from './agent-report.js';
import type { AgentRunner, TokenUsage } from './agent-runner.js';
import { createCliAgentRunner, type CallFiles } from './cli-agent-runner.js';
import { addTokenUsage, compactUsage } from './price-table.js';

/** Options of the `opencode` adapter (`opencode run`). */
export const opencodeOptionsSchema = commonAgentOptionsSchema.extend({
  kind: z.literal('opencode'),
  /** `-m provider/model`. */
  model: z.string().min(1).optional(),
  /** `--agent`, e.g. `build`. */
  agent: z.string().min(1).optional(),
  extraArgs: z.array(z.string()).optional(),
});

/** Options of the `opencode` adapter. */
export type OpencodeOptions = z.infer<typeof opencodeOptionsSchema>;

/** Auth variables opencode's providers read. */
export const OPENCODE_AUTH_ENV = [
  'ANTHROPIC_API_KEY',
  'OPENAI_API_KEY',
  'GEMINI_API_KEY',
  'OPENROUTER_API_KEY',
  'OPENCODE_CONFIG',
];

/** The message opencode gets; the prompt itself is the attached file. */
export const OPENCODE_MESSAGE = 'Carry out the task in the attached file.';

/** The arguments of one `opencode run` call; the prompt file is attached with `-f`. */
export function buildOpencodeArgs(options: OpencodeOptions, files: CallFiles): string[] {
  const args = ['run', OPENCODE_MESSAGE, '--format', 'json'];
  if (options.model !== undefined) args.push('-m', options.model);
  if (options.agent !== undefined) args.push('--agent', options.agent);
  return [...args, ...(options.extraArgs ?? []), '-f', files.promptFile];
}

/** Reads opencode's JSONL events: `step_finish` parts carry cost and tokens (summed); `error` is a failure. */
export function createOpencodeParser(): AgentOutputParser {
  let tokens: TokenUsage | undefined;
  let costUsd: number | undefined;
  let steps = 0;
  let failure: string | undefined;
  let sessionId: string | undefined;
  return {
    onLine(line) {
      const event = parseJsonObject(line);
      if (event === undefined) return;
      sessionId ??= stringOrUndefined(event['sessionID']);
      if (event['type'] === 'step_finish') {
        steps += 1;
        const part = objectOrEmpty(event['part']);
        const cost = numberOrUndefined(part['cost']);
        if (cost !== undefined) costUsd = (costUsd ?? 0) + cost;
        tokens = addTokenUsage(tokens, readOpencodeTokens(objectOrEmpty(part['tokens'])));
      }
      if (event['type'] === 'error') failure ??= errorMessage(objectOrEmpty(event['error']));
    },
    finish: () =>
      buildReport({
        outcome:
          failure === undefined ? undefined : isRateLimitMessage(failure) ? 'rate_limited' : 'api_error',
        finalResult: steps > 0 || failure !== undefined ? 'present' : 'missing',
        tokens,
        costUsd,
        turns: steps > 0 ? steps : undefined,
        sessionId,
        detail: failure,
      }),
  };
}

function errorMessage(error: Record<string, unknown>): string {
  return (
    stringOrUndefined(objectOrEmpty(error['data'])['message']) ??
    stringOrUndefined(error['message']) ??
    stringOrUndefined(error['name']) ??
    'error'
  );
}

function readOpencodeTokens(t: Record<string, unknown>): TokenUsage {
  const cache = objectOrEmpty(t['cache']);
  const output = numberOrUndefined(t['output']);
  const reasoning = numberOrUndefined(t['reasoning']);
  return compactUsage({
    input: numberOrUndefined(t['input']),
    output: output === undefined && reasoning === undefined ? undefined : (output ?? 0) + (reasoning ?? 0),
    cacheRead: numberOrUndefined(cache['read']),
    cacheWrite: numberOrUndefined(cache['write']),
  });
}

/** The `opencode` adapter. */
export function createOpencodeAgentRunner(options: OpencodeOptions, runtime?: AgentRuntime): AgentRunner {
  return createCliAgentRunner(
    {
      name: 'opencode',
      binary: 'opencode',
      installHint: 'Install opencode: npm install -g opencode-ai (then `opencode auth login`).',
      authEnv: OPENCODE_AUTH_ENV,
      buildInvocation: (_request, files) => ({ args: buildOpencodeArgs(options, files) }),
      createParser: () => createOpencodeParser(),
    },
    resolveCommonOptions(options, runtime),
  );
}

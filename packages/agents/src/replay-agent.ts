import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { AgentConfigError } from './agent-errors.js';
import { commonAgentOptionsSchema, resolveCommonOptions, type AgentRuntime } from './agent-options.js';
import {
  buildReport,
  numberOrUndefined,
  objectOrEmpty,
  parseJsonObject,
  stringOrUndefined,
  type AgentOutputParser,
} from './agent-report.js';
import type { AgentRunner, AgentRunRequest, TokenUsage } from './agent-runner.js';
import { createCliAgentRunner } from './cli-agent-runner.js';
import { compactUsage } from './price-table.js';
import { loadReplayScript } from './replay-script.js';
import { resolveTranscriptDir } from './transcript.js';

/** The replay agent executable (run with Node, so it needs no exec bit or shebang support). */
export const REPLAY_AGENT_PATH = fileURLToPath(new URL('../bin/replay-agent.mjs', import.meta.url));

/** Options of the `replay` adapter. */
export const replayOptionsSchema = commonAgentOptionsSchema.extend({
  kind: z.literal('replay'),
  /** Path of the replay script (JSON; see docs/agents.md). */
  script: z.string().min(1),
  /**
   * Where the count of calls per phase is kept between calls (and across `resume`); default
   * `replay-state.json` in the call's transcript folder.
   */
  stateFile: z.string().min(1).optional(),
});

/** Options of the `replay` adapter. */
export type ReplayOptions = z.infer<typeof replayOptionsSchema>;

/** Reads the replay agent's `replay.result` and `replay.error` lines. */
export function createReplayParser(): AgentOutputParser {
  let result: Record<string, unknown> | undefined;
  let error: string | undefined;
  return {
    onLine(line) {
      const event = parseJsonObject(line);
      if (event?.['type'] === 'replay.result') result = event;
      if (event?.['type'] === 'replay.error') error = stringOrUndefined(event['message']);
    },
    finish: () => {
      const tokens = result === undefined ? undefined : readTokens(objectOrEmpty(result['tokens']));
      return buildReport({
        finalResult: result === undefined ? 'missing' : 'present',
        costUsd: result === undefined ? undefined : numberOrUndefined(result['costUsd']),
        tokens: tokens !== undefined && Object.keys(tokens).length > 0 ? tokens : undefined,
        detail: error,
      });
    },
  };
}

function readTokens(t: Record<string, unknown>): TokenUsage {
  return compactUsage({
    input: numberOrUndefined(t['input']),
    output: numberOrUndefined(t['output']),
    cacheRead: numberOrUndefined(t['cacheRead']),
    cacheWrite: numberOrUndefined(t['cacheWrite']),
  });
}

/**
 * The `replay` adapter: plays the script's next step for the request's phase in a child process (file writes
 * and deletes inside `cwd`, the result file written atomically, an exit code, a delay, a reported cost).
 * Rejects with {@link AgentConfigError} when the script is missing or invalid.
 */
export function createReplayAgentRunner(options: ReplayOptions, runtime?: AgentRuntime): AgentRunner {
  const common = resolveCommonOptions(options, runtime);
  const script = resolve(options.script);
  const stateFile = (request: AgentRunRequest): string =>
    options.stateFile === undefined
      ? join(resolveTranscriptDir(request, common.transcriptDir), 'replay-state.json')
      : resolve(options.stateFile);
  const runner = createCliAgentRunner(
    {
      name: 'replay',
      binary: process.execPath,
      installHint: 'The replay agent runs with Node.js 20 or later: install it, or fix the `binary` option.',
      authEnv: [],
      buildInvocation: (request) => ({
        args: [
          REPLAY_AGENT_PATH,
          '--script',
          script,
          '--state',
          stateFile(request),
          '--phase',
          request.phase,
          '--result-file',
          request.resultFile,
          ...(request.callKey === undefined ? [] : ['--call-key', request.callKey]),
        ],
      }),
      createParser: () => createReplayParser(),
    },
    common,
  );
  return {
    name: 'replay',
    run: async (request) => {
      const loaded = await loadReplayScript(script);
      if (!loaded.ok)
        throw new AgentConfigError(`invalid replay script ${script}`, loaded.issues, { script });
      return runner.run(request);
    },
  };
}

import { z } from 'zod';
import { commonAgentOptionsSchema, resolveCommonOptions, type AgentRuntime } from './agent-options.js';
import { buildReport, type AgentOutputParser } from './agent-report.js';
import type { AgentRunner, TokenUsage } from './agent-runner.js';
import { createCliAgentRunner, type CallFiles } from './cli-agent-runner.js';
import { addTokenUsage, compactUsage } from './price-table.js';

/** Options of the `aider` adapter. */
export const aiderOptionsSchema = commonAgentOptionsSchema.extend({
  kind: z.literal('aider'),
  model: z.string().min(1).optional(),
  /** Files added to the chat (`aider <files…>`), relative to the working directory. */
  files: z.array(z.string().min(1)).optional(),
  extraArgs: z.array(z.string()).optional(),
});

/** Options of the `aider` adapter. */
export type AiderOptions = z.infer<typeof aiderOptionsSchema>;

/** Auth variables Aider reads (it talks to many providers). */
export const AIDER_AUTH_ENV = [
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'GEMINI_API_KEY',
  'OPENROUTER_API_KEY',
  'DEEPSEEK_API_KEY',
  'OPENAI_API_BASE',
];

/** The arguments of one Aider call; the prompt is in `--message-file`. */
export function buildAiderArgs(options: AiderOptions, files: CallFiles): string[] {
  const args = [
    '--message-file',
    files.promptFile,
    '--yes-always',
    '--no-auto-commits',
    '--no-stream',
    '--no-pretty',
  ];
  if (options.model !== undefined) args.push('--model', options.model);
  return [...args, ...(options.extraArgs ?? []), ...(options.files ?? [])];
}

const TOKENS_LINE = /^Tokens: (.+?)\.(?: Cost: \$([\d.]+) message, \$([\d.]+) session\.)?\s*$/;

/** Parses Aider's `1.2k`, `3M`, `300` counts. */
export function parseAiderCount(text: string): number | undefined {
  const match = /^([\d.]+)([kKmM]?)$/.exec(text.trim());
  if (match === null) return undefined;
  const scale = { '': 1, k: 1e3, K: 1e3, m: 1e6, M: 1e6 }[match[2] ?? ''] ?? 1;
  return Math.round(Number(match[1]) * scale);
}

function readTokens(parts: string): TokenUsage {
  const fields: Record<string, number | undefined> = {};
  for (const part of parts.split(',')) {
    const match = /^\s*([\d.]+[kKmM]?) (sent|received|cache write|cache hit)$/.exec(part);
    if (match !== null) fields[match[2]!] = parseAiderCount(match[1]!);
  }
  return compactUsage({
    input: fields['sent'],
    output: fields['received'],
    cacheWrite: fields['cache write'],
    cacheRead: fields['cache hit'],
  });
}

/** Reads Aider's `Tokens: … sent, … received. Cost: $x message, $y session.` lines; cost is the last session total. */
export function createAiderParser(): AgentOutputParser {
  let tokens: TokenUsage | undefined;
  let costUsd: number | undefined;
  return {
    onLine(line) {
      const match = TOKENS_LINE.exec(line);
      if (match === null) return;
      tokens = addTokenUsage(tokens, readTokens(match[1]!));
      if (match[3] !== undefined) costUsd = Number(match[3]);
    },
    finish: () => buildReport({ finalResult: 'not_applicable', tokens, costUsd }),
  };
}

/** The `aider` adapter. */
export function createAiderAgentRunner(options: AiderOptions, runtime?: AgentRuntime): AgentRunner {
  return createCliAgentRunner(
    {
      name: 'aider',
      binary: 'aider',
      installHint: 'Install Aider: python -m pip install aider-install && aider-install (see aider.chat).',
      authEnv: AIDER_AUTH_ENV,
      buildInvocation: (_request, files) => ({ args: buildAiderArgs(options, files) }),
      createParser: () => createAiderParser(),
    },
    resolveCommonOptions(options, runtime),
  );
}

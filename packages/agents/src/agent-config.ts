import { z } from 'zod';
import { err, ok, type Result } from '@allium-loop/errors';
import { aiderOptionsSchema, createAiderAgentRunner } from './aider-agent.js';
import { AgentConfigError } from './agent-errors.js';
import type { AgentRuntime } from './agent-options.js';
import type { AgentRunner } from './agent-runner.js';
import { claudeOptionsSchema, createClaudeAgentRunner } from './claude-agent.js';
import { codexOptionsSchema, createCodexAgentRunner } from './codex-agent.js';
import { commandOptionsSchema, createCommandAgentRunner } from './command-agent.js';
import { createGeminiAgentRunner, geminiOptionsSchema } from './gemini-agent.js';
import { createOpencodeAgentRunner, opencodeOptionsSchema } from './opencode-agent.js';
import { createReplayAgentRunner, replayOptionsSchema } from './replay-agent.js';

/** The agent configuration: one object discriminated by `kind`; `z.toJSONSchema(agentConfigSchema)` works. */
export const agentConfigSchema = z.discriminatedUnion('kind', [
  claudeOptionsSchema.strict(),
  codexOptionsSchema.strict(),
  geminiOptionsSchema.strict(),
  aiderOptionsSchema.strict(),
  opencodeOptionsSchema.strict(),
  commandOptionsSchema.strict(),
  replayOptionsSchema.strict(),
]);

/** The agent configuration. */
export type AgentConfig = z.infer<typeof agentConfigSchema>;

/** Every agent kind. */
export type AgentKind = AgentConfig['kind'];

/** Validates an agent configuration; issues read `permissionMode: Invalid option …`. */
export function parseAgentConfig(value: unknown): Result<AgentConfig> {
  const parsed = agentConfigSchema.safeParse(value);
  if (parsed.success) return ok(parsed.data);
  return err(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`));
}

/**
 * Builds the {@link AgentRunner} a configuration names. Throws {@link AgentConfigError} listing every issue
 * when the configuration is invalid. Nothing is started until `run` is called.
 */
export function createAgentRunner(config: unknown, runtime?: AgentRuntime): AgentRunner {
  const parsed = parseAgentConfig(config);
  if (!parsed.ok) throw new AgentConfigError('invalid agent configuration', parsed.issues);
  const value = parsed.value;
  switch (value.kind) {
    case 'claude':
      return createClaudeAgentRunner(value, runtime);
    case 'codex':
      return createCodexAgentRunner(value, runtime);
    case 'gemini':
      return createGeminiAgentRunner(value, runtime);
    case 'aider':
      return createAiderAgentRunner(value, runtime);
    case 'opencode':
      return createOpencodeAgentRunner(value, runtime);
    case 'command':
      return createCommandAgentRunner(value, runtime);
    case 'replay':
      return createReplayAgentRunner(value, runtime);
  }
}

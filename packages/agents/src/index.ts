/**
 * @allium-loop/agents — runs agent CLIs as child processes and reads what they report.
 */
export {
  AGENT_PHASES,
  type AgentOutcome,
  type AgentPhase,
  type AgentRunner,
  type AgentRunRequest,
  type AgentRunResult,
  type OutputStats,
  type TokenUsage,
} from './agent-runner.js';
export {
  AgentBinaryNotFoundError,
  AgentConfigError,
  AgentSpawnError,
  AgentTranscriptError,
} from './agent-errors.js';
export { BASE_ENV_NAMES, buildAgentEnv } from './agent-env.js';
export {
  commonAgentOptionsSchema,
  DEFAULT_KILL_GRACE_MS,
  type AgentRuntime,
  type CommonAgentOptions,
} from './agent-options.js';
export { decideOutcome, type AgentOutputParser, type AgentReport } from './agent-report.js';
export {
  DEFAULT_CAPTURE_LIMITS,
  runProcess,
  type CaptureLimits,
  type ProcessRunOptions,
  type ProcessRunResult,
} from './process-runner.js';
export type { CaptureSnapshot } from './bounded-capture.js';
export { isProcessGroupAlive, terminateProcessGroup } from './process-group.js';
export {
  DEFAULT_PRICE_TABLE,
  findModelPrice,
  modelPriceSchema,
  priceTableSchema,
  priceTokens,
  type ModelPrice,
  type PriceTable,
} from './price-table.js';
export {
  createCliAgentRunner,
  type CallFiles,
  type CliAdapterSpec,
  type CliInvocation,
} from './cli-agent-runner.js';
export {
  buildClaudeArgs,
  claudeOptionsSchema,
  createClaudeAgentRunner,
  type ClaudeOptions,
} from './claude-agent.js';

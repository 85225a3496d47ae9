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
export type { AgentActivity } from './agent-activity.js';
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
export { decideOutcome, parseJsonObject, type AgentOutputParser, type AgentReport } from './agent-report.js';
export {
  DEFAULT_CAPTURE_LIMITS,
  MAX_TIMEOUT_MS,
  runProcess,
  type CaptureLimits,
  type ProcessRunOptions,
  type ProcessRunResult,
} from './process-runner.js';
export type { CaptureSnapshot } from './bounded-capture.js';
export { isProcessGroupAlive, terminateProcessGroup } from './process-group.js';
export {
  PROCESS_MARKER,
  currentProcessScope,
  findMarkedProcesses,
  killCallProcesses,
  killScopeProcesses,
  leaseProcessScope,
  runInProcessScope,
  type MarkedProcess,
} from './process-marker.js';
export {
  DEFAULT_PRICE_TABLE,
  findModelPrice,
  modelPriceSchema,
  priceTableSchema,
  priceTokens,
  worstCaseCallUsd,
  DEFAULT_MODEL_LIMITS,
  type ModelLimits,
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
  ALLIUM_PLUGIN_PHASES,
  buildClaudeArgs,
  claudeOptionsSchema,
  DEFAULT_PHASE_AGENTS,
  PHASE_AGENT_CHOICES,
  PHASE_AGENT_KINDS,
  createClaudeAgentRunner,
  type ClaudeOptions,
} from './claude-agent.js';
export {
  buildCodexArgs,
  codexOptionsSchema,
  createCodexAgentRunner,
  type CodexOptions,
} from './codex-agent.js';
export {
  buildGeminiArgs,
  createGeminiAgentRunner,
  GEMINI_EXIT_TURN_LIMIT,
  geminiOptionsSchema,
  type GeminiOptions,
} from './gemini-agent.js';
export {
  aiderOptionsSchema,
  buildAiderArgs,
  createAiderAgentRunner,
  type AiderOptions,
} from './aider-agent.js';
export {
  buildOpencodeArgs,
  createOpencodeAgentRunner,
  opencodeOptionsSchema,
  type OpencodeOptions,
} from './opencode-agent.js';
export {
  COMMAND_PLACEHOLDERS,
  commandOptionsSchema,
  createCommandAgentRunner,
  substituteCommandArgs,
  type CommandOptions,
} from './command-agent.js';
export {
  createReplayAgentRunner,
  REPLAY_AGENT_PATH,
  replayOptionsSchema,
  type ReplayOptions,
} from './replay-agent.js';
export {
  loadReplayScript,
  parseReplayScript,
  replayScriptSchema,
  replayStepSchema,
  type ReplayScript,
  type ReplayStep,
} from './replay-script.js';
export {
  agentConfigSchema,
  createAgentRunner,
  parseAgentConfig,
  type AgentConfig,
  type AgentKind,
} from './agent-config.js';

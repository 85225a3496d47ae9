/**
 * @allium-loop/agents — runs agent CLIs as child processes and reads what they report.
 */
export type {
  AgentOutcome,
  AgentPhase,
  AgentRunner,
  AgentRunRequest,
  AgentRunResult,
  TokenUsage,
} from './agent-runner.js';

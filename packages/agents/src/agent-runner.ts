/** A phase of the loop that runs as a fresh agent process. */
export type AgentPhase =
  'elicit' | 'distill' | 'propagate' | 'tend' | 'weed' | 'implement' | 'generate' | 'evaluate' | 'step';

/** One agent call. The prompt travels on stdin or in a file, never as a huge argv. */
export interface AgentRunRequest {
  readonly prompt: string;
  readonly cwd: string;
  readonly phase: AgentPhase;
  /** Where the worker expects the agent's result file. */
  readonly resultFile: string;
  /** Wall-clock limit; the whole process tree is killed when it passes. */
  readonly timeoutMs: number;
  /** Remaining budget in USD, passed to CLIs that accept one. */
  readonly budgetUsd?: number;
  readonly signal?: AbortSignal;
}

/** Token usage as reported by the CLI; absent fields were not reported. */
export interface TokenUsage {
  readonly input?: number;
  readonly output?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

/** What one agent call did, as far as the engine can tell from the process and its output. */
export interface AgentRunResult {
  /** `ok` only when the process exited 0 and its final report (where the CLI has one) says success. */
  readonly outcome: AgentOutcome;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly durationMs: number;
  /** USD cost; `undefined` means unknown, never zero by default. */
  readonly costUsd?: number;
  readonly tokens?: TokenUsage;
  readonly turns?: number;
  readonly sessionId?: string;
  /** Redacted transcript of the call. */
  readonly transcriptPath: string;
  /** When the CLI reported a rate limit, the time it resets (epoch ms). */
  readonly rateLimitResetAt?: number;
}

/** Distinct, documented outcomes of an agent call. */
export type AgentOutcome =
  | 'ok'
  | 'failed'
  | 'timed_out'
  | 'aborted'
  | 'max_turns'
  | 'max_budget'
  | 'api_error'
  | 'no_final_result'
  | 'rate_limited';

/** The port every agent adapter implements. */
export interface AgentRunner {
  /** Adapter name, e.g. `claude`. */
  readonly name: string;
  /** Runs one call; rejects only for errors of the engine's own (a missing binary), never for agent failures. */
  run(request: AgentRunRequest): Promise<AgentRunResult>;
}

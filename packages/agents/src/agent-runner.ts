/** A phase of the loop that runs as a fresh agent process. */
export type AgentPhase =
  'elicit' | 'distill' | 'propagate' | 'tend' | 'weed' | 'implement' | 'generate' | 'evaluate' | 'step';

/** Every {@link AgentPhase}, in loop order; handy for schemas and tests. */
export const AGENT_PHASES: readonly AgentPhase[] = [
  'elicit',
  'distill',
  'propagate',
  'tend',
  'weed',
  'implement',
  'generate',
  'evaluate',
  'step',
];

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
  /**
   * Folder for this call's transcript (and the replay adapter's state). Defaults to the adapter's
   * `transcriptDir` option, else to `transcripts/` beside the folder of `resultFile`
   * (`.allium-loop/<slug>/results/x.json` → `.allium-loop/<slug>/transcripts/`).
   */
  readonly transcriptDir?: string;
  /**
   * The engine's idempotency key for this call (its intent key). A call re-run after an interruption carries the
   * same key; the replay agent uses it to replay the same step instead of the next one.
   */
  readonly callKey?: string;
}

/** Token usage as reported by the CLI; absent fields were not reported. `input` excludes cache reads. */
export interface TokenUsage {
  readonly input?: number;
  readonly output?: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

/** How much output a call produced and how much of it the bounded capture had to drop. */
export interface OutputStats {
  readonly stdoutBytes: number;
  readonly stderrBytes: number;
  /** Bytes of stdout and stderr not kept in the transcript (the middle of a long output). */
  readonly omittedBytes: number;
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
  /** One line on why the outcome is not `ok` (the CLI's error message, redacted), when there is one. */
  readonly detail?: string;
  /**
   * The model API refused the CLI's credentials (HTTP 401/403, an invalid key): retrying cannot help, so the
   * engine stops the run `failed`; `detail` names the variable to check.
   */
  readonly authFailure?: true;
  /** The agent's process id, which is also its process group id; absent when no process was started. */
  readonly pid?: number;
  /**
   * The agent's final message, redacted: Claude's result text, Codex's last agent message, Gemini's response.
   * Absent when the CLI reports none (Aider, opencode, the command and replay agents). Workers read a phase record
   * from it when the agent printed the record instead of writing the result file (an official Allium agent).
   */
  readonly finalText?: string;
  /** Output volume; absent for runners that start no process (the fake). */
  readonly output?: OutputStats;
}

/**
 * Distinct, documented outcomes of an agent call (docs/agents.md, "Outcomes"):
 * - `ok`: exit 0 and, where the CLI has a final report, that report says success;
 * - `failed`: a non-zero exit, or a final report that says the run failed for another reason;
 * - `timed_out` / `aborted`: the engine ended the process tree (timeout, AbortSignal);
 * - `max_turns`: Claude `error_max_turns`, Gemini exit 53;
 * - `max_budget`: Claude `error_max_budget_usd`;
 * - `api_error`: Claude `is_error: true` (whatever the subtype), Codex `turn.failed`, Gemini `error`, opencode `error`;
 * - `no_final_result`: exit 0 but the final report the CLI always prints is missing or truncated;
 * - `rate_limited`: the CLI said a usage or rate limit was hit.
 */
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

import type { AgentOutcome, TokenUsage } from './agent-runner.js';
import type { ProcessRunResult } from './process-runner.js';

/** What an adapter read from its CLI's output, before the process facts are combined in. */
export interface AgentReport {
  /** An outcome the output itself establishes (`max_turns`, `api_error` …); absent when it says nothing special. */
  readonly outcome?: AgentOutcome;
  /** Whether the CLI's final report was seen; `not_applicable` for CLIs that print none. */
  readonly finalResult: 'present' | 'missing' | 'not_applicable';
  readonly costUsd?: number;
  readonly tokens?: TokenUsage;
  readonly turns?: number;
  readonly sessionId?: string;
  readonly rateLimitResetAt?: number;
  /** The credentials were refused (see `AgentRunResult.authFailure`). */
  readonly authFailure?: true;
  /** The CLI's own words on a failure. */
  readonly detail?: string;
  /** The agent's final message text, where the CLI reports one (see `AgentRunResult.finalText`). */
  readonly finalText?: string;
}

/** Reads one CLI's stdout as it streams, then reports once the process has ended. */
export interface AgentOutputParser {
  /** Receives each complete stdout line (lines longer than the capture's line limit are skipped). */
  onLine(line: string): void;
  /** Builds the report from what it saw and the process result (exit code, bounded output). */
  finish(run: ProcessRunResult): AgentReport;
}

/**
 * Combines the process facts and the adapter's report into one outcome. Precedence: `aborted`, `timed_out`,
 * an outcome from the output, `failed` on a non-zero exit or a signal, `no_final_result` when the final report
 * is missing, else `ok`.
 */
export function decideOutcome(run: ProcessRunResult, report: AgentReport): AgentOutcome {
  if (run.aborted) return 'aborted';
  if (run.timedOut) return 'timed_out';
  if (report.outcome !== undefined) return report.outcome;
  if (run.exitCode !== 0) return 'failed';
  if (report.finalResult === 'missing') return 'no_final_result';
  return 'ok';
}

/** Parses a line as a JSON object, or returns `undefined` for anything else (text, arrays, truncated JSON). */
export function parseJsonObject(line: string): Record<string, unknown> | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** `value` when it is a finite number, else `undefined`. */
export function numberOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** `value` when it is a non-empty string, else `undefined`. */
export function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** `value` as a plain object, or an empty one. */
export function objectOrEmpty(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** True when a CLI's error message says a usage or rate limit was hit. */
export function isRateLimitMessage(message: string): boolean {
  return /rate.?limit|usage limit|quota|too many requests|\b429\b/i.test(message);
}

/** True when a CLI's error message says its credentials were refused (HTTP 401/403, an invalid key). */
export function isAuthFailureMessage(message: string): boolean {
  return /\b40[13]\b|unauthori[sz]ed|invalid (x-)?api[ -]?key|authentication[_ ]error|forbidden/i.test(
    message,
  );
}

/**
 * The detail of a refused-credentials failure: the CLI's own words, then which of its variables to check, so
 * the user is not left with a bare "401".
 */
export function authFailureDetail(cliText: string, hint: string): string {
  return `the model API refused the credentials (${cliText.trim().slice(0, 300)}). ${hint}`;
}

/** Builds a report without undefined fields (`exactOptionalPropertyTypes`). */
export function buildReport(fields: {
  outcome?: AgentOutcome | undefined;
  finalResult: AgentReport['finalResult'];
  costUsd?: number | undefined;
  tokens?: TokenUsage | undefined;
  turns?: number | undefined;
  sessionId?: string | undefined;
  rateLimitResetAt?: number | undefined;
  authFailure?: true | undefined;
  detail?: string | undefined;
  finalText?: string | undefined;
}): AgentReport {
  return Object.fromEntries(
    Object.entries(fields).filter(([, v]) => v !== undefined),
  ) as unknown as AgentReport;
}

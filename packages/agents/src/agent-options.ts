import { z } from 'zod';
import type { AgentActivity } from './agent-activity.js';
import { DEFAULT_CAPTURE_LIMITS, type CaptureLimits } from './process-runner.js';
import { DEFAULT_PRICE_TABLE, priceTableSchema, type PriceTable } from './price-table.js';

/** Options every agent kind accepts (see docs/agents.md). */
export const commonAgentOptionsSchema = z.object({
  /** Executable to run instead of the CLI's usual name (a name on PATH or a path). */
  binary: z.string().min(1).optional(),
  /** Names of further environment variables passed through to the agent (values are never logged). */
  envAllow: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).optional(),
  /** Milliseconds between SIGTERM and SIGKILL when the process tree is ended. Default 5000. */
  killGraceMs: z.number().int().nonnegative().optional(),
  /** Bounded output capture: bytes kept from the head and the tail of each stream. */
  capture: z
    .object({
      headBytes: z.number().int().nonnegative().optional(),
      tailBytes: z.number().int().nonnegative().optional(),
      maxLineBytes: z.number().int().positive().optional(),
    })
    .strict()
    .optional(),
  /** Folder for transcripts when a request names none. */
  transcriptDir: z.string().min(1).optional(),
  /** Price overrides merged over {@link DEFAULT_PRICE_TABLE}. */
  prices: priceTableSchema.optional(),
});

/** Options every agent kind accepts. */
export type CommonAgentOptions = z.infer<typeof commonAgentOptionsSchema>;

/**
 * What the runtime supplies that is not configuration: the environment the agent's variables come from, and where
 * the agent's live activity goes.
 */
export interface AgentRuntime {
  /** Source of PATH, HOME and auth variables; defaults to `process.env`. Only allowed names are passed on. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * Receives the running call's activity (tool in use, tokens so far) as its CLI streams it, for adapters whose
   * CLI streams events (`claude` in stream-json, `codex`). Called synchronously while output arrives.
   */
  readonly onActivity?: (activity: AgentActivity) => void;
}

/** Common options with defaults applied. */
export interface ResolvedCommonOptions {
  readonly binary: string | undefined;
  readonly envAllow: readonly string[];
  readonly killGraceMs: number;
  readonly capture: CaptureLimits;
  readonly transcriptDir: string | undefined;
  readonly prices: PriceTable;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly onActivity: ((activity: AgentActivity) => void) | undefined;
}

/** Default grace period between SIGTERM and SIGKILL. */
export const DEFAULT_KILL_GRACE_MS = 5_000;

/** Applies defaults to the common options. */
export function resolveCommonOptions(
  options: CommonAgentOptions,
  runtime: AgentRuntime = {},
): ResolvedCommonOptions {
  return {
    binary: options.binary,
    envAllow: options.envAllow ?? [],
    killGraceMs: options.killGraceMs ?? DEFAULT_KILL_GRACE_MS,
    capture: {
      headBytes: options.capture?.headBytes ?? DEFAULT_CAPTURE_LIMITS.headBytes,
      tailBytes: options.capture?.tailBytes ?? DEFAULT_CAPTURE_LIMITS.tailBytes,
      maxLineBytes: options.capture?.maxLineBytes ?? DEFAULT_CAPTURE_LIMITS.maxLineBytes,
    },
    transcriptDir: options.transcriptDir,
    prices: { ...DEFAULT_PRICE_TABLE, ...options.prices },
    env: runtime.env ?? process.env,
    onActivity: runtime.onActivity,
  };
}

import { agentConfigSchema } from '@allium-loop/agents';
import { z } from 'zod';

/** Caps in the config file; durations in seconds. Every key is optional and overridden by its flag. */
export const ConfigCapsSchema = z.strictObject({
  maxTicks: z.int().positive().optional(),
  noProgressTicks: z.int().positive().optional(),
  maxFixAttempts: z.int().positive().optional(),
  innerLoopMax: z.int().positive().optional(),
  wallClockSeconds: z.number().positive().optional(),
  budgetUsd: z.number().positive().optional(),
  maxCallUsd: z.number().positive().optional(),
  agentTimeoutSeconds: z.number().positive().optional(),
  testTimeoutSeconds: z.number().positive().optional(),
});

/**
 * `allium-loop.yaml` at the project root: the single source of truth for its shape. Unknown keys are errors
 * (with their path), so a typo never silently falls back to a default. JSON Schema: docs/schemas/config.schema.json.
 */
export const ConfigSchema = z.strictObject({
  /** The command that runs the project's tests; discovered when absent. */
  testCommand: z.string().min(1).optional(),
  /** The agent to drive (see docs/agents.md); `--agent` and its flags override it. */
  agent: agentConfigSchema.optional(),
  caps: ConfigCapsSchema.optional(),
  /** Parked open questions block convergence too. */
  strictQuestions: z.boolean().optional(),
  /** Slices of a wave that run at once, each in its own git worktree; `--concurrency` overrides it. */
  concurrency: z.int().positive().optional(),
  /**
   * Flat ticks in a row before the stall warning is shown (the upstream loop's `stall_warning_ticks`, default 1);
   * `--stall-warning-ticks` overrides it.
   */
  stallWarningTicks: z.int().positive().optional(),
  /** What resume does when the working tree changed since the last tick. */
  onDrift: z.enum(['reverify', 'reset', 'stop']).optional(),
  /**
   * Test files (paths or globs with `*`/`**`) an agent may weaken (fewer tests or assertions, skip/todo markers,
   * suppressions); every such change is journaled. Read when a run starts. See docs/workers.md.
   */
  allowTestChanges: z.array(z.string().min(1)).optional(),
  /** Extra project files the engine protects like the test command's own scripts and configs. */
  protect: z.array(z.string().min(1)).optional(),
});

/** The validated config file. */
export type Config = z.infer<typeof ConfigSchema>;
/** Caps as written in the config file. */
export type ConfigCaps = z.infer<typeof ConfigCapsSchema>;

import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, normalize, sep } from 'node:path';
import { z } from 'zod';
import { err, ok, type Result } from '@allium-loop/errors';
import { AGENT_PHASES, type AgentPhase } from './agent-runner.js';

/** True when `path` is relative and stays inside the folder it is relative to. */
export function isContainedRelativePath(path: string): boolean {
  if (path === '' || isAbsolute(path) || path.includes('\0')) return false;
  const normalized = normalize(path);
  return normalized !== '..' && !normalized.startsWith(`..${sep}`) && normalized !== '.';
}

const containedPath = z
  .string()
  .refine(
    isContainedRelativePath,
    'must be a relative path inside the working directory (no "..", not absolute)',
  );

/** A file's new content: the text itself, or `{ "from": "x" }` to copy a file next to the script. */
export const replayFileContentSchema = z.union([z.string(), z.object({ from: z.string().min(1) }).strict()]);

/** One scripted agent call. */
export const replayStepSchema = z
  .object({
    /** The phase this step answers; the Nth call of a phase plays the Nth step with that phase. */
    phase: z.enum(AGENT_PHASES as [AgentPhase, ...AgentPhase[]]),
    /** A note for the reader of the script. */
    description: z.string().optional(),
    /** Files to write, relative to the agent's working directory. */
    write: z.record(containedPath, replayFileContentSchema).optional(),
    /** Files to delete, relative to the working directory. */
    delete: z.array(containedPath).optional(),
    /** JSON written atomically to the request's result file; omit it to play an agent that writes none. */
    result: z.json().optional(),
    /** JSON written atomically beside it, as the engine-side record `<tick>-<phase>.loop.json` (docs/workers.md). */
    loop: z.json().optional(),
    /** Exit code; default 0. */
    exitCode: z.number().int().min(0).max(255).optional(),
    /** Milliseconds to wait before doing anything (to exercise timeouts). */
    delayMs: z.number().int().nonnegative().optional(),
    /** Cost to report; absent means unknown. */
    costUsd: z.number().nonnegative().optional(),
    tokens: z
      .object({
        input: z.number().int().nonnegative().optional(),
        output: z.number().int().nonnegative().optional(),
        cacheRead: z.number().int().nonnegative().optional(),
        cacheWrite: z.number().int().nonnegative().optional(),
      })
      .strict()
      .optional(),
    /** Text printed on stdout, as an agent's chatter. */
    stdout: z.string().optional(),
    /** This step also answers every later call of its phase. */
    repeat: z.boolean().optional(),
  })
  .strict();

/** One scripted agent call. */
export type ReplayStep = z.infer<typeof replayStepSchema>;

/** A replay script (docs/agents.md, "The replay script"). */
export const replayScriptSchema = z
  .object({
    version: z.literal(1),
    description: z.string().optional(),
    steps: z.array(replayStepSchema).min(1),
  })
  .strict();

/** A replay script. */
export type ReplayScript = z.infer<typeof replayScriptSchema>;

/** Validates a parsed replay script; issues read `steps.2.write: …`. */
export function parseReplayScript(value: unknown): Result<ReplayScript> {
  const parsed = replayScriptSchema.safeParse(value);
  if (parsed.success) return ok(parsed.data);
  return err(parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`));
}

/** Reads and validates a replay script file; JSON syntax errors are issues too. */
export async function loadReplayScript(path: string): Promise<Result<ReplayScript>> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return err([`cannot read ${path}: ${(error as Error).message}`]);
  }
  try {
    return parseReplayScript(JSON.parse(text));
  } catch (error) {
    return err([`${path} is not valid JSON: ${(error as Error).message}`]);
  }
}

/** The folder `{ "from": … }` contents are read from. */
export function replayScriptDir(path: string): string {
  return dirname(path);
}

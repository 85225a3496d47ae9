import { err, ok, type Result } from '@allium-loop/errors';
import type { z } from 'zod';
import { LoopRecordSchema, RESULT_SCHEMAS, type LoopRecord, type PhaseResult } from './result-schemas.js';
import type { WorkerPhase } from './worker-phase.js';

function parseJson<T>(schema: z.ZodType<T>, text: string): Result<T, readonly string[]> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return err([`not valid JSON: ${(error as Error).message}`]);
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return ok(parsed.data);
  return err(
    parsed.error.issues.map(
      (issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`,
    ),
  );
}

/**
 * Parses a result file's text against its phase's record schema (the upstream schema for distill, tend, propagate
 * and weed); the parsed record always carries `phase`, which upstream records may omit. Never throws: invalid JSON
 * or a schema mismatch comes back as `err` with one readable line per issue (`path: message`).
 */
export function parseWorkerResult<P extends WorkerPhase>(
  phase: P,
  text: string,
): Result<PhaseResult<P>, readonly string[]> {
  const parsed = parseJson(RESULT_SCHEMAS[phase] as z.ZodType<object>, text);
  if (!parsed.ok) return parsed;
  return ok({ ...parsed.value, phase } as PhaseResult<P>);
}

/** Parses an engine-side record (`<tick>-<phase>.loop.json`); never throws. */
export function parseLoopRecord(text: string): Result<LoopRecord, readonly string[]> {
  return parseJson(LoopRecordSchema, text);
}

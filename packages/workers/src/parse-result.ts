import { err, ok, type Result } from '@allium-loop/errors';
import { RESULT_SCHEMAS, type PhaseResult } from './result-schemas.js';
import type { WorkerPhase } from './worker-phase.js';

/**
 * Parses a result file's text against its phase's schema. Never throws: invalid JSON or a schema mismatch comes
 * back as `err` with one readable line per issue (`path: message`).
 */
export function parseWorkerResult<P extends WorkerPhase>(
  phase: P,
  text: string,
): Result<PhaseResult<P>, readonly string[]> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return err([`not valid JSON: ${(error as Error).message}`]);
  }
  const parsed = RESULT_SCHEMAS[phase].safeParse(json);
  if (parsed.success) return ok(parsed.data as PhaseResult<P>);
  return err(
    parsed.error.issues.map(
      (issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(root)'}: ${issue.message}`,
    ),
  );
}

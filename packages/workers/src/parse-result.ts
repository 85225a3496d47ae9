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

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];

/**
 * A result file left by a call of allium-loop 0.1.0 (its own camelCase records, before the upstream hand-offs),
 * turned into today's record — only for reconciling a call that run interrupted (`resume`). propagate is not
 * translated (its records carried no hashes): that call runs again. `undefined` when the text is not such a record.
 */
export function parseLegacyResult<P extends WorkerPhase>(phase: P, text: string): PhaseResult<P> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(json) || json['phase'] !== phase) return undefined;
  const questions = Array.isArray(json['openQuestions'])
    ? json['openQuestions'].flatMap((q) => (isObject(q) && typeof q['text'] === 'string' ? [q['text']] : []))
    : [];
  const translated: Json | undefined =
    phase === 'implement'
      ? {
          phase,
          files_changed: strings(json['filesChanged']),
          contested_tests: Array.isArray(json['contestedTests']) ? json['contestedTests'] : [],
          summary: json['summary'],
        }
      : phase === 'weed'
        ? {
            phase,
            verdict: json['clean'] === true ? 'clean' : 'dirty',
            divergences: (Array.isArray(json['divergences']) ? json['divergences'] : [])
              .filter(isObject)
              .map((d) => ({
                subject: d['construct'],
                classification: d['classification'],
                spec: String(d['description'] ?? ''),
                code: String(d['description'] ?? ''),
              })),
            summary: json['summary'],
          }
        : phase === 'elicit' || phase === 'tend' || phase === 'distill'
          ? {
              phase,
              spec_path: strings(json['specFiles'])[0],
              open_questions: questions,
              summary: json['summary'],
            }
          : undefined;
  if (translated === undefined) return undefined;
  const parsed = parseWorkerResult(phase, JSON.stringify(translated));
  return parsed.ok ? parsed.value : undefined;
}

import { z } from 'zod';
import type { WorkerPhase } from './worker-phase.js';

const relativePath = z
  .string()
  .min(1)
  .refine((p) => !p.startsWith('/') && !p.split(/[\\/]/).includes('..'), {
    message: 'must be a path relative to the project root, without ..',
  });

/** An open question the agent recorded in the spec instead of guessing. */
export const OpenQuestionClaimSchema = z.discriminatedUnion('classification', [
  z.strictObject({
    text: z.string().min(1),
    classification: z.literal('blocking'),
    /** Why the next unit of work cannot proceed without an answer. */
    why: z.string().min(1),
  }),
  z.strictObject({
    text: z.string().min(1),
    classification: z.literal('parked'),
    /** The assumption the agent worked under while the question stays open. */
    assumption: z.string().min(1),
  }),
]);

const specPhaseFields = {
  specFiles: z.array(relativePath),
  openQuestions: z.array(OpenQuestionClaimSchema),
  summary: z.string(),
};

/** elicit: a spec drafted from the goal. */
export const ElicitResultSchema = z.strictObject({
  phase: z.literal('elicit'),
  ...specPhaseFields,
  specFiles: z.array(relativePath).min(1),
});

/** tend: targeted spec edits answering a request. */
export const TendResultSchema = z.strictObject({ phase: z.literal('tend'), ...specPhaseFields });

/** distill: spec captured from code; `newFindings` must equal `findings.length`. */
export const DistillResultSchema = z
  .strictObject({
    phase: z.literal('distill'),
    ...specPhaseFields,
    newFindings: z.int().min(0),
    findings: z.array(z.string().min(1)),
  })
  .refine((r) => r.newFindings === r.findings.length, {
    message: 'newFindings must equal the number of entries in findings',
    path: ['newFindings'],
  });

/** propagate: generated test files and the rules or obligations each covers. */
export const PropagateResultSchema = z.strictObject({
  phase: z.literal('propagate'),
  testFiles: z
    .array(
      z.strictObject({
        path: relativePath,
        /** Rule names (or obligation ids) the file covers; each appears in at least one test title. */
        covers: z.array(z.string().min(1)).min(1),
      }),
    )
    .min(1),
  summary: z.string(),
});

/** implement: code changed, and any generated test the implementer believes is wrong. */
export const ImplementResultSchema = z.strictObject({
  phase: z.literal('implement'),
  filesChanged: z.array(relativePath),
  contestedTests: z.array(z.strictObject({ test: z.string().min(1), reason: z.string().min(1) })),
  summary: z.string(),
});

const location = z.strictObject({ file: relativePath, line: z.int().min(1) });

/** One disagreement between spec and code found by weed. */
export const DivergenceSchema = z
  .strictObject({
    construct: z.string().min(1),
    spec: location.nullable(),
    code: location.nullable(),
    classification: z.enum(['spec-bug', 'code-bug', 'aspirational', 'intentional-gap']),
    description: z.string().min(1),
  })
  .refine((d) => d.spec !== null || d.code !== null, {
    message: 'a divergence points at the spec, the code, or both',
  });

/** weed: divergences between spec and code; `clean` is true exactly when there are none. */
export const WeedResultSchema = z
  .strictObject({
    phase: z.literal('weed'),
    clean: z.boolean(),
    divergences: z.array(DivergenceSchema),
    summary: z.string(),
  })
  .refine((r) => r.clean === (r.divergences.length === 0), {
    message: 'clean must be true exactly when divergences is empty',
    path: ['clean'],
  });

/** The result schema of each phase. */
export const RESULT_SCHEMAS = {
  elicit: ElicitResultSchema,
  distill: DistillResultSchema,
  propagate: PropagateResultSchema,
  tend: TendResultSchema,
  weed: WeedResultSchema,
  implement: ImplementResultSchema,
} as const satisfies Record<WorkerPhase, z.ZodType>;

/** A parsed open-question claim. */
export type OpenQuestionClaim = z.infer<typeof OpenQuestionClaimSchema>;
/** A parsed elicit result. */
export type ElicitResult = z.infer<typeof ElicitResultSchema>;
/** A parsed tend result. */
export type TendResult = z.infer<typeof TendResultSchema>;
/** A parsed distill result. */
export type DistillResult = z.infer<typeof DistillResultSchema>;
/** A parsed propagate result. */
export type PropagateResult = z.infer<typeof PropagateResultSchema>;
/** A parsed implement result. */
export type ImplementResult = z.infer<typeof ImplementResultSchema>;
/** A parsed weed divergence. */
export type Divergence = z.infer<typeof DivergenceSchema>;
/** A parsed weed result. */
export type WeedResult = z.infer<typeof WeedResultSchema>;

/** The parsed result type of a phase. */
export type PhaseResult<P extends WorkerPhase> = z.infer<(typeof RESULT_SCHEMAS)[P]>;
/** Any phase's parsed result. */
export type AnyPhaseResult = PhaseResult<WorkerPhase>;

/**
 * The JSON Schema of a phase's result file, pretty-printed, as it is shown to the agent. Generated from the zod
 * schema so the two never drift; cross-field rules (counts, `clean`) are stated in the prompt text.
 */
export function renderResultJsonSchema(phase: WorkerPhase): string {
  const schema = z.toJSONSchema(RESULT_SCHEMAS[phase], { unrepresentable: 'any' });
  delete (schema as Record<string, unknown>)['$schema'];
  return JSON.stringify(schema, null, 2);
}

import { z } from 'zod';
import type { WorkerPhase } from './worker-phase.js';

/**
 * The phase records, in the upstream Allium hand-off schemas (`docs/schemas/upstream/*-result.schema.json`,
 * plugin 3.14.0) for distill, tend, propagate and weed: the same fields, the same names, no extra properties, so
 * the official `allium:<phase>` agents can be plugged in as workers and our records mean something to their tools.
 * elicit and implement have no upstream schema; theirs follow the same conventions (snake_case, a `summary`).
 * What the engine needs beyond the upstream fields (blocking vs parked, which obligations a test covers) lives in
 * a separate engine-side record, the {@link LoopRecordSchema}, never in these.
 */

/** An upstream `open_questions` list: the text of each `open question` declaration in the spec. */
const openQuestions = z.array(z.string());

/** distill (upstream `distill-result.schema.json`). */
export const DistillResultSchema = z.strictObject({
  phase: z.literal('distill').optional(),
  spec_path: z.string(),
  open_questions: openQuestions.optional(),
  summary: z.string(),
});

/** tend (upstream `tend-result.schema.json`). */
export const TendResultSchema = z.strictObject({
  phase: z.literal('tend').optional(),
  spec_path: z.string(),
  changes: z.array(z.string()).optional(),
  open_questions: openQuestions.optional(),
  summary: z.string(),
});

/** One uncovered obligation, with why (upstream: nothing is silently dropped). */
export const UncoveredObligationSchema = z.strictObject({
  obligation: z.string(),
  classification: z.enum(['infrastructure-gap', 'unmappable-construct']),
  reason: z.string(),
});

/** propagate (upstream `propagate-result.schema.json`). */
export const PropagateResultSchema = z.strictObject({
  phase: z.literal('propagate').optional(),
  obligations: z.strictObject({ total: z.int(), covered: z.int(), uncovered: z.int() }),
  uncovered_obligations: z.array(UncoveredObligationSchema),
  generated_tests: z.array(z.strictObject({ path: z.string(), hash: z.string() })),
  test_paths: z.array(z.string()).optional(),
  open_questions: openQuestions.optional(),
  summary: z.string(),
});

/** One disagreement between spec and code (upstream weed `divergences[]`). */
export const DivergenceSchema = z.strictObject({
  subject: z.string(),
  classification: z.enum(['spec-bug', 'code-bug', 'aspirational', 'intentional-gap']),
  spec: z.string(),
  code: z.string(),
});

/**
 * weed (upstream `weed-result.schema.json`). At run time the engine also holds the rule the schema states in
 * words: `verdict` is `clean` exactly when `divergences` is empty.
 */
export const WeedResultSchema = z
  .strictObject({
    phase: z.literal('weed').optional(),
    mode: z.enum(['check', 'update-spec', 'update-code']).optional(),
    verdict: z.enum(['clean', 'dirty']),
    divergences: z.array(DivergenceSchema),
    open_questions: openQuestions.optional(),
    artefacts: z.array(z.string()).optional(),
    summary: z.string(),
  })
  .refine((r) => (r.verdict === 'clean') === (r.divergences.length === 0), {
    message: 'verdict must be clean exactly when divergences is empty',
    path: ['verdict'],
  });

/** elicit: a spec drafted from the goal (no upstream record; distill's shape). */
export const ElicitResultSchema = z.strictObject({
  phase: z.literal('elicit'),
  spec_path: z.string(),
  open_questions: openQuestions.optional(),
  summary: z.string(),
});

/** implement: code changed, and any generated test the implementer believes is wrong (no upstream record). */
export const ImplementResultSchema = z.strictObject({
  phase: z.literal('implement'),
  files_changed: z.array(z.string()),
  contested_tests: z.array(z.strictObject({ test: z.string().min(1), reason: z.string().min(1) })),
  summary: z.string(),
});

/** The record schema of each phase. */
export const RESULT_SCHEMAS = {
  elicit: ElicitResultSchema,
  distill: DistillResultSchema,
  propagate: PropagateResultSchema,
  tend: TendResultSchema,
  weed: WeedResultSchema,
  implement: ImplementResultSchema,
} as const satisfies Record<WorkerPhase, z.ZodType>;

/** The phases whose records are the upstream hand-offs, and the upstream schema file of each. */
export const UPSTREAM_SCHEMA_FILES = {
  distill: 'distill-result.schema.json',
  tend: 'tend-result.schema.json',
  propagate: 'propagate-result.schema.json',
  weed: 'weed-result.schema.json',
} as const satisfies Partial<Record<WorkerPhase, string>>;

/** An open question the agent classified: blocking (with why) or parked (with the assumption it works under). */
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

/**
 * The engine-side record a phase may write beside its upstream record (`<tick>-<phase>.loop.json`): what the
 * engine needs and the upstream schemas have no field for. Optional: without it every open question is parked
 * (the upstream default: the spec keeps it, nobody claimed it blocks) and the engine finds on its own which
 * obligations each generated test names.
 */
export const LoopRecordSchema = z.strictObject({
  /** The classification of open questions the record lists; one entry per question, same text. */
  open_questions: z.array(OpenQuestionClaimSchema).optional(),
  /** propagate: the obligation ids (or constructs) each generated test file covers — the claims the engine checks. */
  covers: z
    .array(z.strictObject({ path: z.string().min(1), obligations: z.array(z.string().min(1)).min(1) }))
    .optional(),
});

/** A parsed open-question claim. */
export type OpenQuestionClaim = z.infer<typeof OpenQuestionClaimSchema>;
/** A parsed engine-side record. */
export type LoopRecord = z.infer<typeof LoopRecordSchema>;

type WithPhase<S extends z.ZodType, P extends WorkerPhase> = Omit<z.infer<S>, 'phase'> & {
  readonly phase: P;
};

/** A parsed elicit result. */
export type ElicitResult = WithPhase<typeof ElicitResultSchema, 'elicit'>;
/** A parsed tend result. */
export type TendResult = WithPhase<typeof TendResultSchema, 'tend'>;
/** A parsed distill result. */
export type DistillResult = WithPhase<typeof DistillResultSchema, 'distill'>;
/** A parsed propagate result. */
export type PropagateResult = WithPhase<typeof PropagateResultSchema, 'propagate'>;
/** A parsed implement result. */
export type ImplementResult = WithPhase<typeof ImplementResultSchema, 'implement'>;
/** A parsed weed divergence. */
export type Divergence = z.infer<typeof DivergenceSchema>;
/** A parsed weed result. */
export type WeedResult = WithPhase<typeof WeedResultSchema, 'weed'>;

/** The parsed record of a phase, its `phase` always set (upstream records may omit it). */
export type PhaseResult<P extends WorkerPhase> = {
  elicit: ElicitResult;
  distill: DistillResult;
  propagate: PropagateResult;
  tend: TendResult;
  weed: WeedResult;
  implement: ImplementResult;
}[P];
/** Any phase's parsed result. */
export type AnyPhaseResult = PhaseResult<WorkerPhase>;

/**
 * The JSON Schema of a phase's result file, pretty-printed, as it is shown to the agent. Generated from the zod
 * schema so the two never drift (tests hold it to the upstream files); cross-field rules are stated in the prompt.
 */
export function renderResultJsonSchema(phase: WorkerPhase): string {
  return renderSchema(RESULT_SCHEMAS[phase]);
}

/** The JSON Schema of the engine-side record, as it is shown to the agent. */
export function renderLoopRecordJsonSchema(): string {
  return renderSchema(LoopRecordSchema);
}

function renderSchema(schema: z.ZodType): string {
  const json = z.toJSONSchema(schema, { unrepresentable: 'any' });
  delete (json as Record<string, unknown>)['$schema'];
  return JSON.stringify(json, null, 2);
}

import { z } from 'zod';

/** A non-negative integer count. */
const Count = z.number().int().nonnegative();

/** Test results the engine measured itself, or `unknown` when the run produced nothing parseable. */
export const TestsVerdictSchema = z.discriminatedUnion('status', [
  z.object({
    status: z.literal('known'),
    passed: Count,
    failed: Count,
    skipped: Count,
    /** Names of the failing tests, as the test runner reported them. */
    failing: z.array(z.string()),
  }),
  z.object({ status: z.literal('unknown'), reason: z.string() }),
]);

/** How the weed worker classified one divergence between spec and code. */
export const DivergenceKindSchema = z.enum(['code_bug', 'spec_bug', 'aspirational', 'intentional_gap']);

/** One divergence the weed worker found. */
export const DivergenceSchema = z.object({
  kind: DivergenceKindSchema,
  /** The spec construct concerned (`rule Checkout.applyGiftCard`), when there is one. */
  construct: z.string().optional(),
  detail: z.string(),
});

/** The weed result for a tick: `clean`, `dirty` with its divergences, `skipped` (not run) or `unknown` (failed). */
export const WeedVerdictSchema = z.object({
  status: z.enum(['clean', 'dirty', 'skipped', 'unknown']),
  divergences: z.array(DivergenceSchema),
});

/** Structural checks of the spec (parse errors, dangling references…). */
export const StructuralVerdictSchema = z.object({
  errors: Count,
  messages: z.array(z.string()),
});

/** The git state a tick was measured against; `null` outside a git repository. */
export const GitStateSchema = z.object({
  /** `git rev-parse HEAD`. */
  head: z.string().nullable(),
  /** A tree hash of the working copy (tracked and untracked, not ignored). */
  tree: z.string().nullable(),
});

/** Everything the engine measured at the end of one tick; the terms of the convergence invariant. */
export const TickVerdictSchema = z.object({
  tick: z.number().int().positive(),
  at: z.iso.datetime(),
  tests: TestsVerdictSchema,
  weed: WeedVerdictSchema,
  structural: StructuralVerdictSchema,
  openQuestions: z.object({ blocking: Count, parked: Count }),
  /** Code-first: whether the last distill pass found new behaviour; `null` when distill did not run. */
  distillNew: z.boolean().nullable(),
  /** The progress fingerprint (evaluator); equal fingerprints on consecutive ticks mean no progress. */
  fingerprint: z.string(),
  git: GitStateSchema,
  /** Whether the invariant held at the end of this tick. */
  converged: z.boolean(),
});

/** Test results of one tick. */
export type TestsVerdict = z.infer<typeof TestsVerdictSchema>;
/** One weed divergence. */
export type Divergence = z.infer<typeof DivergenceSchema>;
/** The weed result of one tick. */
export type WeedVerdict = z.infer<typeof WeedVerdictSchema>;
/** Structural check result of one tick. */
export type StructuralVerdict = z.infer<typeof StructuralVerdictSchema>;
/** Git head and tree hash. */
export type GitState = z.infer<typeof GitStateSchema>;
/** Everything measured at the end of one tick. */
export type TickVerdict = z.infer<typeof TickVerdictSchema>;

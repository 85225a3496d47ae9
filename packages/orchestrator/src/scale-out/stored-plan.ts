import { createHash } from 'node:crypto';
import { INTEGRATION_ID, type Plan } from '@allium-loop/decomposer';
import { AlliumLoopError } from '@allium-loop/errors';
import { z } from 'zod';
import { plannedSlices } from '../driver/planned-slices.js';

/** Raised on a plan file or slice ledgers that cannot be used: unreadable, invalid, or from different plans. */
export class ScaleOutError extends AlliumLoopError {}

/** One slice of a stored plan, as a CI job runs it. */
export interface StoredSlice {
  readonly id: string;
  /** The id made safe for artifact and branch names (`entity-lifecycle:Order` → `entity-lifecycle-Order`). */
  readonly key: string;
  /** 1-based wave; the integration pass runs in the wave after the last one. */
  readonly wave: number;
  readonly constructs: readonly string[];
  readonly dependsOn: readonly string[];
  /** The integration pass only: the cross-slice chains its tests cover. */
  readonly chains?: readonly (readonly string[])[];
}

/**
 * A plan written by `allium-loop plan --plan-out`, read by `run --slice` and `merge-ledgers`: the goal, the git
 * commit it was made at, and the slices (integration pass last) with their waves. `id` is a hash of the rest, so
 * slice ledgers of one plan can be told from another's, and a hand-edited file is refused.
 */
export interface StoredPlan {
  readonly format: 'allium-loop.plan';
  readonly version: 1;
  readonly id: string;
  readonly goal: string;
  readonly base: string | null;
  readonly specFiles: readonly string[];
  /** The spec's open questions when the plan was made (parked unless a run classifies them blocking). */
  readonly questions: readonly string[];
  /** Number of waves of slices (the integration pass, when planned, is wave `waves + 1`). */
  readonly waves: number;
  readonly slices: readonly StoredSlice[];
}

const StoredSliceSchema = z.object({
  id: z.string().min(1),
  key: z.string().regex(/^[\w.-]+$/, 'must be letters, digits, ".", "_" or "-"'),
  wave: z.number().int().positive(),
  constructs: z.array(z.string()),
  dependsOn: z.array(z.string()),
  chains: z.array(z.array(z.string())).exactOptional(),
});

const StoredPlanSchema = z.object({
  format: z.literal('allium-loop.plan'),
  version: z.literal(1),
  id: z.string().regex(/^[0-9a-f]{16}$/, 'must be 16 hex digits'),
  goal: z.string().min(1),
  base: z.string().nullable(),
  specFiles: z.array(z.string()),
  questions: z.array(z.string()),
  waves: z.number().int().nonnegative(),
  slices: z.array(StoredSliceSchema),
});

/** `entity-lifecycle:Order` → `entity-lifecycle-Order`: usable in artifact names, branch names and file names. */
export function sliceKey(id: string): string {
  return id.replace(/[^\w.-]+/g, '-');
}

/** The hash of everything a stored plan says (all of it but its id), in a fixed key order. */
function planId(plan: Omit<StoredPlan, 'format' | 'version' | 'id'>): string {
  const { goal, base, specFiles, questions, waves, slices } = plan;
  return createHash('sha256')
    .update(JSON.stringify({ goal, base, specFiles, questions, waves, slices }))
    .digest('hex')
    .slice(0, 16);
}

/** Turns the decomposer's plan into the stored plan of a goal. Pure (hashing aside). */
export function storePlan(input: {
  readonly goal: string;
  readonly base: string | null;
  readonly specFiles: readonly string[];
  readonly questions: readonly string[];
  readonly plan: Plan;
}): StoredPlan {
  const waveOf = new Map(input.plan.slices.map((slice) => [slice.id, slice.wave + 1]));
  const waves = input.plan.waves.length;
  const used = new Set<string>();
  const slices = plannedSlices(input.plan).map((slice): StoredSlice => {
    let key = sliceKey(slice.id);
    // Two ids that differ only in their unsafe characters would share a key: the later one gets a suffix.
    for (let n = 2; used.has(key); n += 1) key = `${sliceKey(slice.id)}-${String(n)}`;
    used.add(key);
    return {
      id: slice.id,
      key,
      wave: slice.id === INTEGRATION_ID ? waves + 1 : (waveOf.get(slice.id) ?? 1),
      constructs: [...slice.constructs],
      dependsOn: [...slice.dependsOn],
      ...(slice.chains === undefined ? {} : { chains: slice.chains.map((chain) => [...chain]) }),
    };
  });
  const body = {
    goal: input.goal,
    base: input.base,
    specFiles: [...input.specFiles],
    questions: [...input.questions],
    waves,
    slices,
  };
  return { format: 'allium-loop.plan', version: 1, id: planId(body), ...body };
}

/**
 * The GitHub Actions matrix of one wave (1-based), for `strategy.matrix: ${{ fromJSON(...) }}`: one entry per slice
 * with its wave, id and key. A wave past the last gives `{ include: [] }` (the workflow skips that job).
 */
export function githubMatrix(
  plan: StoredPlan,
  wave: number,
): { include: { wave: number; slice: string; key: string }[] } {
  return {
    include: plan.slices
      .filter((slice) => slice.wave === wave && slice.id !== INTEGRATION_ID)
      .map((slice) => ({ wave, slice: slice.id, key: slice.key })),
  };
}

/** Reads a plan file's text; a bad file is a {@link ScaleOutError} `scale_out.plan_invalid` naming what is wrong. */
export function parseStoredPlan(text: string, path: string): StoredPlan {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ScaleOutError(`The plan file ${path} is not JSON: ${(error as Error).message}.`, {
      code: 'scale_out.plan_invalid',
      cause: error,
      context: { path },
      hint: "Write it with 'allium-loop plan --plan-out <file>'.",
    });
  }
  const parsed = StoredPlanSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.map(
      (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
    );
    throw new ScaleOutError(`The plan file ${path} is not a stored plan: ${issues.join('; ')}.`, {
      code: 'scale_out.plan_invalid',
      context: { path, issues },
      hint: "Write it with 'allium-loop plan --plan-out <file>'.",
    });
  }
  const plan = parsed.data;
  if (planId(plan) !== plan.id) {
    throw new ScaleOutError(`The plan file ${path} was edited: its id does not match its content.`, {
      code: 'scale_out.plan_invalid',
      context: { path },
      hint: "Plan again with 'allium-loop plan --plan-out <file>' rather than editing the file.",
    });
  }
  return plan;
}

/** The slice of a stored plan with this id; a {@link ScaleOutError} `scale_out.unknown_slice` lists the valid ids. */
export function findSlice(plan: StoredPlan, id: string): StoredSlice {
  const slice = plan.slices.find((s) => s.id === id || s.key === id);
  if (slice !== undefined) return slice;
  throw new ScaleOutError(`The plan has no slice '${id}'.`, {
    code: 'scale_out.unknown_slice',
    context: { id, plan: plan.id },
    hint: `Its slices: ${plan.slices.map((s) => s.id).join(', ')}.`,
  });
}

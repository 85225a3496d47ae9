import { createHash } from 'node:crypto';
import { err, ok, type Result } from '@allium-loop/errors';
import { z } from 'zod';

/** One user story of a PRD. Keys other tools add are kept as they are. */
export const UserStorySchema = z.looseObject({
  id: z.string().min(1),
  title: z.string(),
  /** Lower numbers are worked first. */
  priority: z.number(),
  passes: z.boolean(),
  acceptanceCriteria: z.array(z.string()).optional(),
  notes: z.string().optional(),
  /** Set by the engine once the evaluator rejected the story `evalRetries` times. */
  blocked: z.boolean().optional(),
  rejections: z.number().int().nonnegative().optional(),
});

/** A PRD file (`prd.json`, `.loop/prd.json`): a `userStories` array; other top-level keys are kept. */
export const PrdSchema = z.looseObject({ userStories: z.array(UserStorySchema) });

/** A user story. */
export type UserStory = z.infer<typeof UserStorySchema>;
/** A PRD document. */
export type Prd = z.infer<typeof PrdSchema>;

const WRONG_KEYS = ['stories', 'tasks', 'items', 'features', 'user_stories', 'userstories', 'requirements'];

/**
 * Parses and validates a PRD's text. Issues name the JSON path. A PRD that lists its stories under another key
 * (`stories`, `tasks` …) is an error naming that key — it is never renamed silently. Duplicate story ids are errors.
 */
export function parsePrd(text: string): Result<Prd> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return err([`not valid JSON: ${(error as Error).message}`]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return err(['the top level must be an object with a "userStories" array']);
  const record = value as Record<string, unknown>;
  if (!('userStories' in record)) {
    const wrong = Object.keys(record).find((key) => WRONG_KEYS.includes(key.toLowerCase()));
    return err([
      wrong === undefined
        ? `no "userStories" array at the top level (keys found: ${Object.keys(record).join(', ') || 'none'})`
        : `found "${wrong}" at the top level, but stories must be listed under "userStories"; rename the key — it is not guessed`,
    ]);
  }
  const parsed = PrdSchema.safeParse(value);
  if (!parsed.success)
    return err(
      parsed.error.issues.map(
        (issue) => `${issue.path.map(String).join('.') || '(top level)'}: ${issue.message}`,
      ),
    );
  const seen = new Set<string>();
  const duplicates = parsed.data.userStories
    .map((s) => s.id)
    .filter((id) => (seen.has(id) ? true : (seen.add(id), false)));
  if (duplicates.length > 0) return err([`duplicate story ids: ${[...new Set(duplicates)].join(', ')}`]);
  return ok(parsed.data);
}

/** The PRD as written back: two-space JSON with a final newline. */
export function serializePrd(prd: Prd): string {
  return `${JSON.stringify(prd, null, 2)}\n`;
}

/**
 * The story to work next: not passing, not blocked, within `only` when given; lowest priority number first, then
 * file order. `undefined` when none is left.
 */
export function nextStory(prd: Prd, only?: string): UserStory | undefined {
  return prd.userStories
    .map((story, index) => ({ story, index }))
    .filter(
      ({ story }) => !story.passes && story.blocked !== true && (only === undefined || story.id === only),
    )
    .sort((a, b) => a.story.priority - b.story.priority || a.index - b.index)[0]?.story;
}

/** An evaluator's verdict on a story. */
export type StoryVerdict =
  { readonly verdict: 'PASS' } | { readonly verdict: 'REJECT'; readonly reason: string };

/**
 * Applies a verdict to the story `id`: PASS sets `passes`; REJECT appends `[REJECTED] <reason>` to `notes` (the
 * agent-loop layout the generator prompts look for), increments `rejections`, and once `rejections ≥ evalRetries`
 * marks the story `blocked` and appends `[BLOCKED] …`. Pure.
 */
export function applyVerdict(prd: Prd, id: string, verdict: StoryVerdict, evalRetries: number): Prd {
  return {
    ...prd,
    userStories: prd.userStories.map((story) => {
      if (story.id !== id) return story;
      if (verdict.verdict === 'PASS') return { ...story, passes: true };
      const rejections = (story.rejections ?? 0) + 1;
      const blocked = rejections >= evalRetries;
      const lines = [
        `${REJECTED_MARK} ${verdict.reason}`,
        ...(blocked
          ? [
              `${BLOCKED_MARK} rejected ${String(rejections)} time${rejections === 1 ? '' : 's'}; needs a human`,
            ]
          : []),
      ];
      return {
        ...story,
        notes: [story.notes ?? '', ...lines].filter((line) => line !== '').join('\n'),
        rejections,
        ...(blocked ? { blocked: true } : {}),
      };
    }),
  };
}

/** The marker of an evaluator's rejection in a story's `notes`. */
export const REJECTED_MARK = '[REJECTED]';
/** The marker of a story blocked at the rejection limit in its `notes`. */
export const BLOCKED_MARK = '[BLOCKED]';

/** sha256 of a value's JSON, hex. */
export function checksum(value: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify(value ?? null))
    .digest('hex');
}

/** Checksums of every story's acceptance criteria, by id. */
export function criteriaChecksums(prd: Prd): Record<string, string> {
  return Object.fromEntries(prd.userStories.map((s) => [s.id, checksum(s.acceptanceCriteria ?? [])]));
}

/** Ids whose acceptance criteria differ from `recorded` (changed or removed). */
export function changedCriteria(prd: Prd, recorded: Readonly<Record<string, string>>): string[] {
  const now = criteriaChecksums(prd);
  return Object.keys(recorded).filter((id) => now[id] !== recorded[id]);
}

/** Story ids whose engine-owned fields (`passes`, `blocked`, `rejections`) differ between two PRDs. */
export function tamperedStatus(engine: Prd, disk: Prd): string[] {
  const byId = new Map(disk.userStories.map((s) => [s.id, s]));
  return engine.userStories
    .filter((s) => {
      const other = byId.get(s.id);
      return (
        other !== undefined &&
        (other.passes !== s.passes ||
          (other.blocked ?? false) !== (s.blocked ?? false) ||
          (other.rejections ?? 0) !== (s.rejections ?? 0))
      );
    })
    .map((s) => s.id);
}

const VerdictSchema = z.union([
  z.object({ verdict: z.literal('PASS'), reason: z.string().optional() }),
  z.object({ verdict: z.literal('REJECT'), reason: z.string().trim().min(1) }),
]);

/** Reads an evaluator's result file text: a missing or malformed verdict is a REJECT that says why. */
export function readVerdict(text: string | undefined): StoryVerdict {
  if (text === undefined) return { verdict: 'REJECT', reason: 'the evaluator wrote no verdict file' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { verdict: 'REJECT', reason: 'the evaluator verdict file is not valid JSON' };
  }
  const parsed = VerdictSchema.safeParse(value);
  if (!parsed.success)
    return {
      verdict: 'REJECT',
      reason:
        'malformed evaluator verdict (expected {"verdict": "PASS"} or {"verdict": "REJECT", "reason": "…"})',
    };
  return parsed.data.verdict === 'PASS'
    ? { verdict: 'PASS' }
    : { verdict: 'REJECT', reason: parsed.data.reason };
}

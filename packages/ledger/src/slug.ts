import slugify from 'slugify';
import { LedgerError } from './ledger-errors.js';

/** Longest base slug; leaves room for a `-NN` suffix within the 64 characters a slug may have. */
export const MAX_BASE_SLUG_LENGTH = 48;

/** What occupies a slug in the store: nothing, a ledger for some goal, or a ledger that cannot be read. */
export type SlugOccupant =
  | { readonly kind: 'free' }
  | { readonly kind: 'goal'; readonly goal: string }
  | { readonly kind: 'unreadable' };

/** The slug chosen for a goal, and whether a ledger for that goal already exists under it. */
export interface SlugChoice {
  readonly slug: string;
  readonly existing: boolean;
}

/** Normalises a goal for comparison: trimmed, inner whitespace collapsed. */
export function normalizeGoal(goal: string): string {
  return goal.trim().replace(/\s+/g, ' ');
}

/**
 * The base slug of a goal: lowercase ASCII words joined by `-`, cut at a word boundary to at most
 * {@link MAX_BASE_SLUG_LENGTH} characters; `run` when the goal has no letters or digits slugify can keep.
 */
export function baseSlug(goal: string): string {
  const full = slugify(normalizeGoal(goal), { lower: true, strict: true, trim: true });
  if (full.length === 0) return 'run';
  if (full.length <= MAX_BASE_SLUG_LENGTH) return full;
  const cut = full.slice(0, MAX_BASE_SLUG_LENGTH);
  if (full[MAX_BASE_SLUG_LENGTH] === '-') return cut;
  const lastDash = cut.lastIndexOf('-');
  return (lastDash > 0 ? cut.slice(0, lastDash) : cut).replace(/-+$/, '');
}

/**
 * Finds the slug for a goal: the base slug if it is free or already holds this goal, otherwise the first of
 * `base-2`, `base-3` … that is. An unreadable ledger is treated as holding this goal, so the user sees the
 * corruption error instead of silently starting a second run. Throws when 999 candidates are taken.
 */
export async function chooseSlug(
  goal: string,
  occupant: (slug: string) => Promise<SlugOccupant>,
): Promise<SlugChoice> {
  const base = baseSlug(goal);
  const wanted = normalizeGoal(goal);
  for (let n = 1; n < 1000; n += 1) {
    const slug = n === 1 ? base : `${base}-${n}`;
    const found = await occupant(slug);
    if (found.kind === 'free') return { slug, existing: false };
    if (found.kind === 'unreadable' || normalizeGoal(found.goal) === wanted) return { slug, existing: true };
  }
  throw new LedgerError(`No free slug for goal "${wanted}" after 999 candidates.`, {
    code: 'ledger.slug_exhausted',
    context: { base },
    hint: 'Remove old ledgers from .allium-loop/ or reword the goal.',
  });
}

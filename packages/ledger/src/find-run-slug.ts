import type { LedgerStore } from './ledger-store.js';
import { chooseSlug, type SlugChoice } from './slug.js';

/**
 * Finds the slug of `goal` in a store: the existing run of the same goal, or a fresh slug that collides with no
 * other goal's ledger (see {@link chooseSlug}). A corrupt ledger on the way counts as this goal's, so its
 * corruption error surfaces on load instead of a second run starting beside it.
 */
export function findRunSlug(store: LedgerStore, goal: string): Promise<SlugChoice> {
  return chooseSlug(goal, async (slug) => {
    const loaded = await store.load(slug);
    if (loaded.ok) return { kind: 'goal', goal: loaded.value.ledger.goal };
    return loaded.issues.kind === 'missing' ? { kind: 'free' } : { kind: 'unreadable' };
  });
}

import { describe, expect, it } from 'vitest';
import { createLedger } from './create-ledger.js';
import { findRunSlug } from './find-run-slug.js';
import { createMemoryLedgerStore } from './memory-ledger-store.js';

describe('findRunSlug', () => {
  it('finds the same goal again and separates colliding goals', async () => {
    const store = createMemoryLedgerStore();
    const first = await findRunSlug(store, 'Add gift cards');
    expect(first).toEqual({ slug: 'add-gift-cards', existing: false });
    const { lease } = await store.acquire(first.slug);
    await store.save(
      lease,
      createLedger({ goal: 'Add gift cards', slug: first.slug, mode: 'spec', now: new Date(0) }),
    );
    expect(await findRunSlug(store, 'Add gift cards')).toEqual({ slug: 'add-gift-cards', existing: true });
    expect(await findRunSlug(store, 'add gift-cards!')).toEqual({
      slug: 'add-gift-cards-2',
      existing: false,
    });
  });

  it('points at a corrupt ledger rather than starting beside it', async () => {
    const store = createMemoryLedgerStore();
    store.backend.ledgers.set('add-gift-cards', '{ not json');
    expect(await findRunSlug(store, 'Add gift cards')).toEqual({ slug: 'add-gift-cards', existing: true });
  });
});

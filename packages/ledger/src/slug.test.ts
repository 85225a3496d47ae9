import { describe, expect, it } from 'vitest';
import { baseSlug, chooseSlug, MAX_BASE_SLUG_LENGTH, type SlugOccupant } from './slug.js';
import { SlugSchema } from './ledger-schema.js';

describe('baseSlug', () => {
  it.each([
    ['add gift cards to checkout', 'add-gift-cards-to-checkout'],
    ['  Capture   the BILLING module! ', 'capture-the-billing-module'],
    ['Crème brûlée & café', 'creme-brulee-and-cafe'],
    ['!!!', 'run'],
  ])('slugifies %j as %s', (goal, expected) => {
    expect(baseSlug(goal)).toBe(expected);
  });

  it('bounds the length at a word boundary and always yields a valid slug', () => {
    const slug = baseSlug('implement the whole quarterly reporting pipeline including exports and archives');
    expect(slug.length).toBeLessThanOrEqual(MAX_BASE_SLUG_LENGTH);
    expect(slug).toBe('implement-the-whole-quarterly-reporting-pipeline');
    expect(SlugSchema.safeParse(baseSlug('x'.repeat(200))).success).toBe(true);
  });
});

describe('chooseSlug', () => {
  const occupants =
    (map: Record<string, SlugOccupant>) =>
    async (slug: string): Promise<SlugOccupant> =>
      map[slug] ?? { kind: 'free' };

  it('uses the base slug for a new goal', async () => {
    expect(await chooseSlug('add gift cards', occupants({}))).toEqual({
      slug: 'add-gift-cards',
      existing: false,
    });
  });

  it('finds the existing ledger of the same goal, whitespace aside', async () => {
    const taken = occupants({ 'add-gift-cards': { kind: 'goal', goal: 'add  gift cards ' } });
    expect(await chooseSlug('add gift cards', taken)).toEqual({ slug: 'add-gift-cards', existing: true });
  });

  it('gives a different goal with the same slug a suffix, and finds it again later', async () => {
    const taken = { 'add-gift-cards': { kind: 'goal', goal: 'Add gift cards!' } } as const;
    const first = await chooseSlug('add gift-cards', occupants(taken));
    expect(first).toEqual({ slug: 'add-gift-cards-2', existing: false });
    const later = occupants({ ...taken, 'add-gift-cards-2': { kind: 'goal', goal: 'add gift-cards' } });
    expect(await chooseSlug('add gift-cards', later)).toEqual({ slug: 'add-gift-cards-2', existing: true });
    expect(await chooseSlug('ADD GIFT CARDS?', later)).toEqual({ slug: 'add-gift-cards-3', existing: false });
  });

  it('treats an unreadable ledger as this goal so the corruption surfaces', async () => {
    expect(
      await chooseSlug('add gift cards', occupants({ 'add-gift-cards': { kind: 'unreadable' } })),
    ).toEqual({
      slug: 'add-gift-cards',
      existing: true,
    });
  });
});

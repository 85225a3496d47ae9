import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICE_TABLE, findModelPrice, priceTokens } from './price-table.js';

describe('price table', () => {
  it('matches the longest prefix and prices cache reads at their own rate', () => {
    expect(findModelPrice(DEFAULT_PRICE_TABLE, 'gpt-5-mini-2025-08-07')).toBe(
      DEFAULT_PRICE_TABLE['gpt-5-mini'],
    );
    const table = { m: { inputPerMTok: 2, outputPerMTok: 10, cacheReadPerMTok: 0.5 } };
    expect(priceTokens(table, 'm', { input: 1e6, output: 1e5, cacheRead: 2e6 })).toBeCloseTo(2 + 1 + 1, 9);
  });

  it('leaves the cost unknown for an unknown or unnamed model', () => {
    expect(priceTokens(DEFAULT_PRICE_TABLE, 'mystery-model', { input: 10 })).toBeUndefined();
    expect(priceTokens(DEFAULT_PRICE_TABLE, undefined, { input: 10 })).toBeUndefined();
  });

  it('prices cache traffic at the input rate when the model has no cache price', () => {
    expect(priceTokens({ m: { inputPerMTok: 1, outputPerMTok: 1 } }, 'm', { cacheWrite: 1e6 })).toBeCloseTo(
      1,
      9,
    );
  });
});

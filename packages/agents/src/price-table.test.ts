import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICE_TABLE, findModelPrice, priceTokens, worstCaseCallUsd } from './price-table.js';

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

describe('worstCaseCallUsd: the budget pre-flight reservation', () => {
  it("is one full-context turn with the longest output at the model's list prices", () => {
    // claude-sonnet-4 (the claude CLI's default): 200k input at $3/MTok + 64k output at $15/MTok.
    expect(worstCaseCallUsd({ kind: 'claude' })).toEqual({
      usd: expect.closeTo(1.56, 6),
      model: 'claude-sonnet-4',
    });
    // A named model wins over the CLI's default; a dated model name matches its prefix.
    expect(worstCaseCallUsd({ kind: 'claude', model: 'claude-opus-4-1-20250805' })?.usd).toBeCloseTo(5.4, 6);
    expect(worstCaseCallUsd({ kind: 'codex', model: 'gpt-5' })?.usd).toBeCloseTo(1.62, 6);
  });

  it('follows price overrides, and is unknown (never zero) without a model, a price or limits', () => {
    const prices = { 'claude-sonnet-4': { inputPerMTok: 1, outputPerMTok: 1 } };
    expect(worstCaseCallUsd({ kind: 'claude', prices })?.usd).toBeCloseTo(0.264, 6);
    expect(worstCaseCallUsd({ kind: 'command', argv: ['x'] })).toBeUndefined();
    expect(worstCaseCallUsd({ kind: 'replay', script: 's.json' })).toBeUndefined();
    expect(worstCaseCallUsd({ kind: 'claude', model: 'someone-elses-model' })).toBeUndefined();
    expect(worstCaseCallUsd(undefined)).toBeUndefined();
  });
});

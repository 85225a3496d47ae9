import { z } from 'zod';
import type { TokenUsage } from './agent-runner.js';

/** Prices of one model in USD per million tokens. */
export const modelPriceSchema = z
  .object({
    inputPerMTok: z.number().nonnegative(),
    outputPerMTok: z.number().nonnegative(),
    /** Cached input reads; priced at the input rate when absent. */
    cacheReadPerMTok: z.number().nonnegative().optional(),
    /** Cache writes; priced at the input rate when absent. */
    cacheWritePerMTok: z.number().nonnegative().optional(),
  })
  .strict();

/** Prices of one model in USD per million tokens. */
export type ModelPrice = z.infer<typeof modelPriceSchema>;

/** Model name (or name prefix) → price. The longest matching key wins: `gpt-5-mini` before `gpt-5`. */
export const priceTableSchema = z.record(z.string().min(1), modelPriceSchema);

/** Model name (or name prefix) → price. */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * List prices used when the CLI reports tokens but no cost (Codex, Gemini). They go stale: users override or
 * extend them with the `prices` option of an agent config, and a model missing here leaves the cost unknown.
 */
export const DEFAULT_PRICE_TABLE: PriceTable = {
  'gpt-5': { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
  'gpt-5-codex': { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
  'gpt-5-mini': { inputPerMTok: 0.25, outputPerMTok: 2, cacheReadPerMTok: 0.025 },
  'gpt-5-nano': { inputPerMTok: 0.05, outputPerMTok: 0.4, cacheReadPerMTok: 0.005 },
  'o4-mini': { inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.275 },
  'gemini-2.5-pro': { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.31 },
  'gemini-2.5-flash': { inputPerMTok: 0.3, outputPerMTok: 2.5, cacheReadPerMTok: 0.075 },
  'gemini-2.5-flash-lite': { inputPerMTok: 0.1, outputPerMTok: 0.4, cacheReadPerMTok: 0.025 },
  'claude-sonnet-4': { inputPerMTok: 3, outputPerMTok: 15, cacheReadPerMTok: 0.3, cacheWritePerMTok: 3.75 },
  'claude-opus-4': { inputPerMTok: 15, outputPerMTok: 75, cacheReadPerMTok: 1.5, cacheWritePerMTok: 18.75 },
  'claude-3-5-haiku': { inputPerMTok: 0.8, outputPerMTok: 4, cacheReadPerMTok: 0.08, cacheWritePerMTok: 1 },
};

/** The price of `model`: an exact key, else the longest key that is a prefix of it, else `undefined`. */
export function findModelPrice(table: PriceTable, model: string): ModelPrice | undefined {
  const exact = table[model];
  if (exact !== undefined) return exact;
  let best: string | undefined;
  for (const key of Object.keys(table))
    if (model.startsWith(key) && (best === undefined || key.length > best.length)) best = key;
  return best === undefined ? undefined : table[best];
}

/** USD cost of `tokens` on `model`, or `undefined` when the model has no price (unknown is never zero). */
export function priceTokens(
  table: PriceTable,
  model: string | undefined,
  tokens: TokenUsage,
): number | undefined {
  if (model === undefined) return undefined;
  const price = findModelPrice(table, model);
  if (price === undefined) return undefined;
  const perToken = (perMTok: number): number => perMTok / 1_000_000;
  return (
    (tokens.input ?? 0) * perToken(price.inputPerMTok) +
    (tokens.output ?? 0) * perToken(price.outputPerMTok) +
    (tokens.cacheRead ?? 0) * perToken(price.cacheReadPerMTok ?? price.inputPerMTok) +
    (tokens.cacheWrite ?? 0) * perToken(price.cacheWritePerMTok ?? price.inputPerMTok)
  );
}

/** Adds two usages field by field; a field stays absent only when both lack it. */
export function addTokenUsage(a: TokenUsage | undefined, b: TokenUsage): TokenUsage {
  const sum = (x: number | undefined, y: number | undefined): number | undefined =>
    x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);
  return compactUsage({
    input: sum(a?.input, b.input),
    output: sum(a?.output, b.output),
    cacheRead: sum(a?.cacheRead, b.cacheRead),
    cacheWrite: sum(a?.cacheWrite, b.cacheWrite),
  });
}

/** Drops undefined fields, as `exactOptionalPropertyTypes` wants. */
export function compactUsage(usage: {
  input?: number | undefined;
  output?: number | undefined;
  cacheRead?: number | undefined;
  cacheWrite?: number | undefined;
}): TokenUsage {
  const out: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number } = {};
  if (usage.input !== undefined) out.input = usage.input;
  if (usage.output !== undefined) out.output = usage.output;
  if (usage.cacheRead !== undefined) out.cacheRead = usage.cacheRead;
  if (usage.cacheWrite !== undefined) out.cacheWrite = usage.cacheWrite;
  return out;
}

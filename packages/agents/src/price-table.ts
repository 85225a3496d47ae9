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

/** The most a model reads and writes in one turn, in tokens. */
export interface ModelLimits {
  readonly contextTokens: number;
  readonly maxOutputTokens: number;
}

/** Published context windows and output limits; the longest matching key wins, as for prices. */
export const DEFAULT_MODEL_LIMITS: Readonly<Record<string, ModelLimits>> = {
  'gpt-5': { contextTokens: 272_000, maxOutputTokens: 128_000 },
  'o4-mini': { contextTokens: 200_000, maxOutputTokens: 100_000 },
  'gemini-2.5': { contextTokens: 1_048_576, maxOutputTokens: 65_536 },
  'claude-sonnet-4': { contextTokens: 200_000, maxOutputTokens: 64_000 },
  'claude-opus-4': { contextTokens: 200_000, maxOutputTokens: 32_000 },
  'claude-3-5-haiku': { contextTokens: 200_000, maxOutputTokens: 8_192 },
};

/** The model an agent kind's CLI uses when its configuration names none. */
const DEFAULT_MODELS: Readonly<Record<string, string>> = {
  claude: 'claude-sonnet-4',
  codex: 'gpt-5-codex',
  gemini: 'gemini-2.5-pro',
};

/**
 * The worst case of one agent call for the budget pre-flight: one turn that fills the model's context window and
 * writes its longest output, at the price table's rates (the configuration's `prices` over the defaults). The model
 * is the configuration's `model`, else the CLI's default. `undefined` for a model without a price or limits (the
 * `command` and `replay` agents). One turn, not a whole multi-turn session: `--max-call-usd` sets the ceiling.
 */
export function worstCaseCallUsd(
  config: unknown,
): { readonly usd: number; readonly model: string } | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const { kind, model, prices } = config as { kind?: unknown; model?: unknown; prices?: unknown };
  const name =
    typeof model === 'string' ? model : typeof kind === 'string' ? DEFAULT_MODELS[kind] : undefined;
  if (name === undefined) return undefined;
  const parsed = priceTableSchema.safeParse(prices ?? {});
  const price = findModelPrice({ ...DEFAULT_PRICE_TABLE, ...(parsed.success ? parsed.data : {}) }, name);
  const limits = findByPrefix(DEFAULT_MODEL_LIMITS, name);
  if (price === undefined || limits === undefined) return undefined;
  const usd =
    (limits.contextTokens * price.inputPerMTok + limits.maxOutputTokens * price.outputPerMTok) / 1_000_000;
  return { usd, model: name };
}

/** The price of `model`: an exact key, else the longest key that is a prefix of it, else `undefined`. */
export function findModelPrice(table: PriceTable, model: string): ModelPrice | undefined {
  return findByPrefix(table, model);
}

function findByPrefix<T>(table: Readonly<Record<string, T>>, model: string): T | undefined {
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

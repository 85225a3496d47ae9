import type { AgentRunResult } from '@allium-loop/agents';
import type { Ledger } from '@allium-loop/ledger';

/** Adds one agent call to the ledger's spend: the call, its cost (unknown costs counted apart) and tokens. Pure. */
export function addSpend(ledger: Ledger, result: AgentRunResult): Ledger {
  const tokens = result.tokens ?? {};
  const spent = ledger.spent;
  return {
    ...ledger,
    spent: {
      ...spent,
      agentCalls: spent.agentCalls + 1,
      usd: result.costUsd === undefined ? spent.usd : (spent.usd ?? 0) + result.costUsd,
      usdUnknownCalls: spent.usdUnknownCalls + (result.costUsd === undefined ? 1 : 0),
      tokens: {
        input: spent.tokens.input + (tokens.input ?? 0),
        output: spent.tokens.output + (tokens.output ?? 0),
        cacheRead: spent.tokens.cacheRead + (tokens.cacheRead ?? 0),
        cacheWrite: spent.tokens.cacheWrite + (tokens.cacheWrite ?? 0),
      },
    },
  };
}

/** A duration for people: `90 s`, `12 min`. */
export function seconds(ms: number): string {
  return ms >= 120_000 ? `${String(Math.round(ms / 60_000))} min` : `${String(Math.round(ms / 1000))} s`;
}

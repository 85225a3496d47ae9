import { z } from 'zod';
import { LedgerObjectSchema } from './ledger-schema.js';
import { formatIssues } from './parse-ledger.js';

/**
 * A ledger written by the upstream Allium `/allium` skill (`docs/schemas/upstream/ledger.schema.json`, plugin
 * 3.14.0): the fields that schema names, typed as it types them. It is open to extra fields, which are ignored.
 * `tick` must also be ≥ 0 to be continued here (the schema allows any integer).
 */
export const UpstreamLedgerSchema = z.looseObject({
  goal: z.string(),
  mode: z.enum(['spec-first', 'code-first']),
  tick: z.number().int().nonnegative(),
  active_inner_loop: z.string().optional(),
  completed_sub_goals: z.array(z.string()).optional(),
  open_questions: z.array(z.string()).optional(),
  generated_test_hashes: z.record(z.string(), z.unknown()).optional(),
  reconciliation: z.string().optional(),
  last_results: z.record(z.string(), z.unknown()).optional(),
  witness_records: z.array(z.string()).optional(),
});

/** A ledger the upstream skill wrote. */
export type UpstreamLedger = z.infer<typeof UpstreamLedgerSchema>;

const UPSTREAM_KEYS = new Set(['goal', 'mode', 'tick']);

/** The keys only this engine writes; a document holding none of them was not written by allium-loop. */
export const ENGINE_LEDGER_KEYS: readonly string[] = [
  'runKind',
  ...Object.keys(LedgerObjectSchema.shape).filter((key) => !UPSTREAM_KEYS.has(key)),
];

/** What a JSON document is, seen as a possible upstream ledger. */
export type UpstreamReading =
  | { readonly kind: 'engine' }
  | { readonly kind: 'upstream'; readonly ledger: UpstreamLedger }
  | { readonly kind: 'invalid'; readonly issues: readonly string[] };

/**
 * Reads a parsed JSON document as a ledger of the upstream skill: `engine` when it holds any key only this engine
 * writes (or is not an object), `upstream` when it has none and is valid against the upstream schema, `invalid`
 * (with readable issues) when it has none and is not. Pure.
 */
export function readUpstreamLedger(json: unknown): UpstreamReading {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return { kind: 'engine' };
  if (ENGINE_LEDGER_KEYS.some((key) => key in json)) return { kind: 'engine' };
  const parsed = UpstreamLedgerSchema.safeParse(json);
  return parsed.success
    ? { kind: 'upstream', ledger: parsed.data }
    : { kind: 'invalid', issues: formatIssues(parsed.error.issues) };
}

/** The `sha256` hex of an upstream `generated_test_hashes` value (`sha256:<hex>` or bare hex), if it is one. */
export function upstreamTestHash(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const hex = value.startsWith('sha256:') ? value.slice('sha256:'.length) : value;
  return /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
}

/**
 * The history entry kind that records an adopted upstream ledger; its `data` is the document as the skill wrote
 * it. The stored ledger keeps that document's witness records (before this engine's) and its reconciliation line
 * (until a propagate here reconciles).
 */
export const UPSTREAM_ADOPTED = 'upstream_adopted';

import { z } from 'zod';
import { LedgerObjectSchema, RunModeSchema, type Ledger } from './ledger-schema.js';
import { UPSTREAM_ADOPTED } from './upstream-ledger.js';

/**
 * The ledger as stored at `.allium-loop/<slug>.json`: its top level is the upstream Allium ledger
 * (`docs/schemas/upstream/ledger.schema.json`, plugin 3.14.0) — `goal`, `mode` (`spec-first` | `code-first`), `tick`
 * and the upstream keys the engine keeps current (`completed_sub_goals`, `open_questions`, `generated_test_hashes`,
 * `reconciliation`, `witness_records`) — so the `/allium` skill reads a ledger this engine wrote. The engine's own
 * state lives beside them under its own keys (which the upstream schema allows): the run kind as `runKind`, the
 * rest as in memory. The upstream keys are derived from the engine's state on every write and never read back.
 */
export const StoredLedgerSchema = LedgerObjectSchema.extend({
  /** Upstream: the loop's mode (the engine's entry mode; `spec-first` before the entry is chosen). */
  mode: z.enum(['spec-first', 'code-first']),
  /** The engine's run kind (`spec`, `verify`, `stories`, `state-file`); in memory this is `Ledger.mode`. */
  runKind: RunModeSchema,
  /** Upstream: the sub-goals (slices) that converged. */
  completed_sub_goals: z.array(z.string()),
  /** Upstream: the parked, non-blocking questions still open. */
  open_questions: z.array(z.string()),
  /** Upstream: path → content hash (`sha256:<hex>`) of each generated test, the witness's tamper baseline. */
  generated_test_hashes: z.record(z.string(), z.string()),
  /** Upstream: the last `N obligations, M covered, K uncovered` line, once a propagate reconciled. */
  reconciliation: z.string().exactOptional(),
  /** Upstream: the witness verdicts recorded (one line each). */
  witness_records: z.array(z.string()),
}).refine((ledger) => ledger.modeState.kind === ledger.runKind, {
  message: 'the loop state is of another kind than the run kind',
  path: ['modeState', 'kind'],
});

/** The stored ledger document. */
export type StoredLedger = z.infer<typeof StoredLedgerSchema>;

/** The keys of the upstream ledger the engine derives on write (and drops on read). */
const UPSTREAM_DERIVED = [
  'completed_sub_goals',
  'open_questions',
  'generated_test_hashes',
  'reconciliation',
  'witness_records',
] as const;

interface LoopFacts {
  readonly line?: string;
  readonly witness: string[];
}

/** The witness records and reconciliation line of an upstream ledger this run adopted, if it adopted one. */
function adoptedFacts(ledger: Ledger): LoopFacts {
  const data = ledger.history.find((entry) => entry.kind === UPSTREAM_ADOPTED)?.data;
  const witness = Array.isArray(data?.['witness_records'])
    ? data['witness_records'].filter((w): w is string => typeof w === 'string')
    : [];
  const line = data?.['reconciliation'];
  return typeof line === 'string' ? { line, witness } : { witness };
}

/**
 * The reconciliation line and witness summaries: an adopted upstream ledger's, then those a spec run's loop states
 * hold (the run's, then each slice's); the latest reconciliation wins.
 */
function loopFacts(ledger: Ledger): LoopFacts {
  const adopted = adoptedFacts(ledger);
  const state = ledger.modeState;
  if (state.kind !== 'spec') return adopted;
  const loops = [state.loop, ...Object.values(state.slices ?? {})].filter((l) => l !== undefined);
  const witness = [
    ...adopted.witness,
    ...loops.flatMap((l) => (l.witness === undefined ? [] : [l.witness.summary])),
  ];
  const line = state.loop?.reconciliation?.line ?? adopted.line;
  return line === undefined ? { witness } : { line, witness };
}

/** The document stored for `ledger`: the in-memory ledger with the upstream top level. Pure. */
export function toStoredLedger(ledger: Ledger): Record<string, unknown> {
  const facts = loopFacts(ledger);
  const { mode: runKind, ...rest } = ledger;
  return {
    ...rest,
    mode: ledger.entry?.mode ?? 'spec-first',
    runKind,
    completed_sub_goals: ledger.subGoals.filter((g) => g.status === 'converged').map((g) => g.id),
    open_questions: ledger.questions
      .filter((q) => q.classification === 'parked' && q.status === 'open')
      .map((q) => q.text),
    generated_test_hashes: Object.fromEntries(
      ledger.protectedTests.map((t) => [t.path, `sha256:${t.sha256}`]),
    ),
    ...(facts.line === undefined ? {} : { reconciliation: facts.line }),
    witness_records: facts.witness,
  };
}

/**
 * The in-memory shape of a stored (schema version 3) document: the run kind back in `mode`, the upstream keys
 * dropped (they are derived). Anything that is not a version-3 document is returned as it is. Pure.
 */
export function fromStoredLedger(document: Readonly<Record<string, unknown>>): Record<string, unknown> {
  if (!('runKind' in document)) return { ...document };
  const { runKind, ...rest } = document;
  const kept = Object.fromEntries(
    Object.entries(rest).filter(([key]) => !(UPSTREAM_DERIVED as readonly string[]).includes(key)),
  );
  return { ...kept, mode: runKind };
}

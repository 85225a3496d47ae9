import { LedgerError } from './ledger-errors.js';
import type { Intent, IntentOutcome, Ledger } from './ledger-schema.js';

/** What an intent records about the side effect it announces. */
export interface IntentInput {
  readonly tick: number;
  readonly phase: string;
  /** What is about to happen: `agent-call`, `revert`, `test-run` … */
  readonly action: string;
  /** Whatever reconciliation needs (result file path, agent, attempt). */
  readonly data?: Readonly<Record<string, unknown>>;
  readonly at: Date;
}

/** The ledger after {@link beginIntent}, the intent under that key, and whether it was created now. */
export interface BegunIntent {
  readonly ledger: Ledger;
  readonly intent: Intent;
  /** False when an intent with this key already existed: it is returned unchanged and nothing is added. */
  readonly created: boolean;
}

/**
 * Records the intent to perform a side effect under an idempotency key. Save the returned ledger BEFORE acting.
 * Beginning a key that exists returns the existing record (`created: false`), whatever its outcome, so a resumed
 * process never does the same effect twice without deciding to. Pure: the input ledger is not modified.
 */
export function beginIntent(ledger: Ledger, key: string, input: IntentInput): BegunIntent {
  const existing = ledger.intents.find((intent) => intent.key === key);
  if (existing !== undefined) return { ledger, intent: existing, created: false };
  const intent: Intent = {
    key,
    tick: input.tick,
    phase: input.phase,
    action: input.action,
    begunAt: input.at.toISOString(),
    data: { ...input.data },
    outcome: null,
  };
  return { ledger: { ...ledger, intents: [...ledger.intents, intent] }, intent, created: true };
}

/** How a side effect ended, for {@link endIntent}. */
export interface IntentEnd {
  readonly status: IntentOutcome['status'];
  readonly detail?: string;
  readonly at: Date;
}

/**
 * Records the outcome of an intent. Ending an intent that already has an outcome keeps the first one (idempotent).
 * Throws `LedgerError` `ledger.unknown_intent` when no intent has that key. Pure.
 */
export function endIntent(ledger: Ledger, key: string, end: IntentEnd): Ledger {
  const index = ledger.intents.findIndex((intent) => intent.key === key);
  const intent = ledger.intents[index];
  if (intent === undefined) {
    throw new LedgerError(`No intent "${key}" to end in run "${ledger.slug}".`, {
      code: 'ledger.unknown_intent',
      context: { slug: ledger.slug, key },
    });
  }
  if (intent.outcome !== null) return ledger;
  const outcome: IntentOutcome = {
    status: end.status,
    at: end.at.toISOString(),
    ...(end.detail === undefined ? {} : { detail: end.detail }),
  };
  const intents = ledger.intents.map((item, i) => (i === index ? { ...item, outcome } : item));
  return { ...ledger, intents };
}

/** Intents begun but never ended, oldest first: on resume, each must be reconciled (accept its result or redo it). */
export function pendingIntents(ledger: Ledger): readonly Intent[] {
  return ledger.intents.filter((intent) => intent.outcome === null);
}

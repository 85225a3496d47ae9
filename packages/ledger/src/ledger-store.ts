import type { Result } from '@allium-loop/errors';

/** Why a stored ledger could not be loaded. The file is never overwritten in any of these cases. */
export type LedgerLoadFailure =
  | { readonly kind: 'missing' }
  | { readonly kind: 'unreadable'; readonly file: string; readonly message: string }
  | { readonly kind: 'invalid_json'; readonly file: string; readonly message: string }
  | { readonly kind: 'schema_invalid'; readonly file: string; readonly issues: readonly string[] };

/**
 * Persistence port for run ledgers, keyed by slug. Adapters: in-memory (tests) and file
 * (`.allium-loop/<slug>.json`, atomic writes). `TLedger` is the validated ledger document.
 */
export interface LedgerStore<TLedger> {
  /** Loads and validates a ledger; never throws on bad content, returns a typed failure instead. */
  load(slug: string): Promise<Result<TLedger, LedgerLoadFailure>>;
  /** Saves atomically; writes nothing when the content is unchanged. Refused when the caller lost the lease. */
  save(slug: string, ledger: TLedger): Promise<void>;
  /** Slugs of every ledger in the store. */
  list(): Promise<readonly string[]>;
}

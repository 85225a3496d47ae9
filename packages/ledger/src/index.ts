/**
 * @allium-loop/ledger — the system of record for a run: schema (pure), atomic store, lease, intents, journal.
 */
export type { LedgerLoadFailure, LedgerStore } from './ledger-store.js';
export { createRedactor, isSecretEnvName, REDACTED, type Redactor } from './redact.js';

/**
 * @allium-loop/ledger/testing — fakes for code that uses the ledger: the memory store, a fake clock, a fake
 * process table, sample ledgers, and the conformance suite every `LedgerStore` adapter must pass.
 */
export { describeLedgerStore, type LedgerStoreHarness, type StoreIdentity } from './describe-ledger-store.js';
export { createFakeClock, type FakeClock } from './fake-clock.js';
export { createFakeProcessTable, type FakeProcessTable } from './fake-process-table.js';
export { sampleLedger, withHistory } from './sample-ledger.js';
export {
  createMemoryLedgerBackend,
  createMemoryLedgerStore,
  type MemoryLedgerBackend,
  type MemoryLedgerStore,
  type MemoryLedgerStoreOptions,
} from '../memory-ledger-store.js';

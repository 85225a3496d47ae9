import { createMemoryLedgerBackend, createMemoryLedgerStore } from './memory-ledger-store.js';
import { createRedactor } from './redact.js';
import { createFakeClock } from './testing/fake-clock.js';
import { createFakeProcessTable } from './testing/fake-process-table.js';
import { describeLedgerStore } from './testing/describe-ledger-store.js';

describeLedgerStore('memory', async () => {
  const backend = createMemoryLedgerBackend();
  const clock = createFakeClock();
  const processes = createFakeProcessTable();
  const envSecret = 'memory-secret-value-42';
  const redactor = createRedactor({ SERVICE_TOKEN: envSecret });
  const staleAfterMs = 60_000;
  return {
    clock,
    processes,
    staleAfterMs,
    envSecret,
    open: ({ pid, host = 'this-host' }) =>
      createMemoryLedgerStore({
        backend,
        redactor,
        env: { now: clock.now, pid, host, isPidAlive: processes.isAlive, staleAfterMs },
      }),
    writeRawLedger: async (slug, text) => void backend.ledgers.set(slug, text),
    readRawLedger: async (slug) => backend.ledgers.get(slug),
    writeRawJournal: async (slug, text) => void backend.journals.set(slug, text),
    readRawJournal: async (slug) => backend.journals.get(slug),
    dispose: async () => undefined,
  };
});

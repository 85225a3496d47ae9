import type { Lease, LedgerStore } from '@allium-loop/ledger';

/** How often a supervisor refreshes its lease while it runs (well inside the ledger's staleness bound). */
export const HEARTBEAT_MS = 10_000;

/**
 * Runs `work` while holding the lease of `slug`: acquires it (taking over a stale one and saying so), keeps its
 * heartbeat fresh, and releases it however `work` ends. Throws the store's `LeaseHeldError` when a live
 * supervisor holds it.
 */
export async function withLease<T>(
  store: LedgerStore,
  slug: string,
  announce: ((line: string) => void) | undefined,
  work: (lease: Lease) => Promise<T>,
): Promise<T> {
  const acquired = await store.acquire(slug);
  if (acquired.takenOver !== undefined) {
    const { previous, reason } = acquired.takenOver;
    announce?.(
      `Took over the lease of ${slug} from pid ${String(previous.pid)} on ${previous.host} (${reason === 'dead_pid' ? 'process is gone' : 'heartbeat went stale'}).`,
    );
  }
  const timer = setInterval(() => {
    store.heartbeat(acquired.lease).catch(() => undefined);
  }, HEARTBEAT_MS);
  timer.unref();
  try {
    return await work(acquired.lease);
  } finally {
    clearInterval(timer);
    await store.release(acquired.lease).catch(() => undefined);
  }
}

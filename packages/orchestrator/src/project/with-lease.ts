import { killScopeProcesses, leaseProcessScope, runInProcessScope } from '@allium-loop/agents';
import type { Lease, LedgerStore } from '@allium-loop/ledger';

/** How often a supervisor refreshes its lease while it runs (well inside the ledger's staleness bound). */
export const HEARTBEAT_MS = 10_000;

/** How long processes a dead supervisor left behind get between SIGTERM and SIGKILL. */
const STALE_KILL_GRACE_MS = 2_000;

/**
 * Runs `work` while holding the lease of `slug`: acquires it (taking over a stale one and saying so), keeps its
 * heartbeat fresh, and releases it however `work` ends. Every process `work` starts carries the lease's process
 * scope; when the lease is taken over from a dead supervisor, the processes of that supervisor's scope (its agent
 * and test commands, which outlive a `kill -9`) are killed before `work` starts. Throws the store's
 * `LeaseHeldError` when a live supervisor holds it.
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
    const stale = await killScopeProcesses(leaseProcessScope(previous), STALE_KILL_GRACE_MS);
    if (stale.length > 0)
      announce?.(
        `Killed ${String(stale.length)} process(es) the previous supervisor left running (pid ${stale.join(', ')}).`,
      );
  }
  const timer = setInterval(() => {
    store.heartbeat(acquired.lease).catch(() => undefined);
  }, HEARTBEAT_MS);
  timer.unref();
  try {
    return await runInProcessScope(leaseProcessScope(acquired.lease), () => work(acquired.lease));
  } finally {
    clearInterval(timer);
    await store.release(acquired.lease).catch(() => undefined);
  }
}

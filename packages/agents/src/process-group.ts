import { killMarkedProcessesNow } from './process-marker.js';

/** Sends `signal` to every process in group `pgid`; false when the group no longer exists. */
export function signalProcessGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (isErrno(error, 'ESRCH')) return false;
    // EPERM: a member changed identity (setuid); nothing more this process can do.
    if (isErrno(error, 'EPERM')) return false;
    throw error;
  }
}

/** True while at least one process of group `pgid` exists. */
export function isProcessGroupAlive(pgid: number): boolean {
  return signalProcessGroup(pgid, 0);
}

/** Resolves true once group `pgid` is gone, false if it still exists after `timeoutMs`. */
export async function waitForProcessGroupExit(pgid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isProcessGroupAlive(pgid)) {
    if (Date.now() >= deadline) return false;
    await sleep(25);
  }
  return true;
}

/**
 * Ends a whole process tree that runs in its own group: SIGTERM to the group, then SIGKILL to whatever is left
 * after `graceMs`. Resolves once the group is gone (or after a bounded wait for the kernel to reap it).
 */
export async function terminateProcessGroup(pgid: number, graceMs: number): Promise<void> {
  if (!signalProcessGroup(pgid, 'SIGTERM')) return;
  if (await waitForProcessGroupExit(pgid, graceMs)) return;
  signalProcessGroup(pgid, 'SIGKILL');
  await waitForProcessGroupExit(pgid, 5_000);
}

const liveGroups = new Map<number, string | undefined>();
let exitHookInstalled = false;

/**
 * Remembers a running group (and the marker its processes carry) so that, should the engine itself exit while
 * the agent runs, the group and every marked process are killed rather than orphaned. Returns the function that
 * forgets it.
 */
export function trackProcessGroup(pgid: number, marker?: string): () => void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const group of liveGroups.keys()) signalProcessGroup(group, 'SIGKILL');
      const markers = new Set([...liveGroups.values()].filter((m): m is string => m !== undefined));
      if (markers.size > 0) killMarkedProcessesNow((value) => markers.has(value));
    });
  }
  liveGroups.set(pgid, marker);
  return () => liveGroups.delete(pgid);
}

function isErrno(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/**
 * The environment variable every process the engine starts carries: `ALLIUM_LOOP_CALL=<scope>/<call>`. A child
 * inherits it, and so does a grandchild that leaves the process group (`setsid`, a double fork), so the engine can
 * find and kill every process of a call, and every process a dead engine left behind, by reading
 * `/proc/<pid>/environ`. A process that starts with a scrubbed environment (`env -i`) does not carry it; the
 * docs name that limit.
 */
export const PROCESS_MARKER = 'ALLIUM_LOOP_CALL';

const scopes = new AsyncLocalStorage<string>();
/** The scope of calls made outside {@link runInProcessScope}: unique to this engine process. */
const STANDALONE_SCOPE = `standalone-${String(process.pid)}-${randomUUID()}`;

/**
 * Runs `work` with every process it starts (through `runProcess`, at any depth of awaits) marked with `scope`, so
 * that {@link killScopeProcesses} can find them later, even from another engine process.
 */
export function runInProcessScope<T>(scope: string, work: () => Promise<T>): Promise<T> {
  return scopes.run(scope, work);
}

/** The scope of the current async context, or the engine's standalone scope. */
export function currentProcessScope(): string {
  return scopes.getStore() ?? STANDALONE_SCOPE;
}

/** A fresh marker value for one call in the current scope. */
export function newCallMarker(): string {
  return `${currentProcessScope()}/${randomUUID()}`;
}

/** The scope id of the supervisor that holds (or held) a run's lease: stable for its whole life, unique. */
export function leaseProcessScope(holder: {
  readonly pid: number;
  readonly host: string;
  readonly startedAt: string;
}): string {
  return `lease:${holder.host}:${String(holder.pid)}:${holder.startedAt}`;
}

/** A live process found carrying a marker. */
export interface MarkedProcess {
  readonly pid: number;
  readonly marker: string;
}

/**
 * Every live process (zombies excluded) whose environment carries a marker accepted by `accept`. Reads
 * `/proc`; returns an empty list where there is none (macOS), or for processes this user may not read.
 */
export async function findMarkedProcesses(accept: (marker: string) => boolean): Promise<MarkedProcess[]> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  const found: MarkedProcess[] = [];
  await Promise.all(
    entries.map(async (entry) => {
      if (!/^\d+$/.test(entry)) return;
      const pid = Number(entry);
      if (pid === process.pid) return;
      const environ = await readFile(`/proc/${entry}/environ`, 'latin1').catch(() => '');
      const marker = markerIn(environ);
      if (marker === undefined || !accept(marker)) return;
      if (await isZombie(entry)) return;
      found.push({ pid, marker });
    }),
  );
  return found;
}

async function isZombie(pid: string): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  if (stat === '') return true;
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
}

/**
 * Kills every process whose marker `accept` takes: SIGTERM, then SIGKILL to whatever is left after `graceMs`,
 * scanning again until none is left (a process may fork while it is being killed). Returns the pids it signalled.
 */
export async function killMarkedProcesses(
  accept: (marker: string) => boolean,
  graceMs: number,
): Promise<number[]> {
  const signalled = new Set<number>();
  let found = await findMarkedProcesses(accept);
  if (found.length === 0) return [];
  for (const { pid } of found) signal(pid, 'SIGTERM', signalled);
  const until = Date.now() + graceMs;
  while (found.length > 0 && Date.now() < until) {
    await sleep(25);
    found = await findMarkedProcesses(accept);
  }
  for (let round = 0; found.length > 0 && round < 200; round += 1) {
    for (const { pid } of found) signal(pid, 'SIGKILL', signalled);
    await sleep(25);
    found = await findMarkedProcesses(accept);
  }
  return [...signalled];
}

/**
 * SIGKILLs every marked process `accept` takes, synchronously (for the engine's `exit` hook, where nothing
 * asynchronous runs any more).
 */
export function killMarkedProcessesNow(accept: (marker: string) => boolean): void {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    const marker = markerIn(environ);
    if (marker !== undefined && accept(marker)) signal(Number(entry), 'SIGKILL', new Set());
  }
}

/** The value of the marker variable in a `/proc/<pid>/environ` text, if it is there. */
function markerIn(environ: string): string | undefined {
  const prefix = `${PROCESS_MARKER}=`;
  let at: number;
  if (environ.startsWith(prefix)) at = 0;
  else {
    const inside = environ.indexOf(`\0${prefix}`);
    if (inside === -1) return undefined;
    at = inside + 1;
  }
  const end = environ.indexOf('\0', at);
  return environ.slice(at + prefix.length, end === -1 ? undefined : end);
}

/** Kills every process of one call (its exact marker). */
export function killCallProcesses(marker: string, graceMs: number): Promise<number[]> {
  return killMarkedProcesses((value) => value === marker, graceMs);
}

/** Kills every process any call of `scope` started (e.g. the agents of an engine that was `kill -9`ed). */
export function killScopeProcesses(scope: string, graceMs: number): Promise<number[]> {
  return killMarkedProcesses((value) => value.startsWith(`${scope}/`), graceMs);
}

function signal(pid: number, name: NodeJS.Signals, signalled: Set<number>): void {
  try {
    process.kill(pid, name);
    signalled.add(pid);
  } catch {
    // ESRCH: already gone; EPERM: not ours to kill.
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { z } from 'zod';
import type { LeaseRecord, TakeoverReason } from './ledger-store.js';

/** How long a heartbeat stays fresh by default: 5 minutes. Holders should heartbeat every 30 s or so. */
export const DEFAULT_STALE_AFTER_MS = 5 * 60_000;

/** The schema of `.allium-loop/<slug>.lock`. */
export const LeaseRecordSchema = z.object({
  slug: z.string(),
  token: z.string().min(8),
  pid: z.number().int(),
  host: z.string(),
  startedAt: z.iso.datetime(),
  heartbeatAt: z.iso.datetime(),
});

/** The process-level facts a lease needs; injected so tests can play several processes and move time. */
export interface LeaseEnvironment {
  /** The current time. */
  readonly now: () => Date;
  /** This process's pid. */
  readonly pid: number;
  /** This machine's host name. */
  readonly host: string;
  /** Whether a pid is alive on this host. */
  readonly isPidAlive: (pid: number) => boolean;
  /** A fresh random owner token. */
  readonly newToken: () => string;
  /** A heartbeat older than this (ms) makes a lease stale. */
  readonly staleAfterMs: number;
  /** When this process started (epoch ms): a lock with our pid and host but an earlier start is a reused pid's. */
  readonly processStartedAt: number;
}

/** True unless `process.kill(pid, 0)` says there is no such process (EPERM means it exists). */
export function isPidAliveOnThisHost(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (cause) {
    return (cause as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The real environment: wall clock, `process.pid`, `os.hostname()`, `kill(pid, 0)`, random 128-bit tokens, the
 * process start time. With an overridden clock, the process is taken to start at that clock's current time.
 */
export function systemLeaseEnvironment(overrides: Partial<LeaseEnvironment> = {}): LeaseEnvironment {
  const now = overrides.now ?? (() => new Date());
  const processStartedAt =
    overrides.now === undefined ? Date.now() - process.uptime() * 1000 : overrides.now().getTime();
  return {
    now,
    pid: process.pid,
    host: hostname(),
    isPidAlive: isPidAliveOnThisHost,
    newToken: () => randomBytes(16).toString('hex'),
    staleAfterMs: DEFAULT_STALE_AFTER_MS,
    processStartedAt,
    ...overrides,
  };
}

/**
 * Decides whether a lock may be taken over: its pid is dead on this host (or is our own pid in a lock written
 * before this process started), or its heartbeat is older than the bound.
 * Returns `undefined` while the holder is live.
 */
export function judgeStaleness(record: LeaseRecord, env: LeaseEnvironment): TakeoverReason | undefined {
  if (record.host === env.host) {
    // Our own pid in a lock that predates this process: a previous process with the same pid (containers).
    const reusedPid = record.pid === env.pid && Date.parse(record.startedAt) < env.processStartedAt;
    const deadPid = record.pid !== env.pid && !env.isPidAlive(record.pid);
    if (reusedPid || deadPid) return 'dead_pid';
  }
  const age = env.now().getTime() - Date.parse(record.heartbeatAt);
  return age > env.staleAfterMs ? 'stale_heartbeat' : undefined;
}

/** Parses lock file text; `undefined` when it is not a valid lock. */
export function parseLeaseRecord(text: string): LeaseRecord | undefined {
  try {
    const parsed = LeaseRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

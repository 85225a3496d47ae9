import { describe, expect, it } from 'vitest';
import { judgeStaleness, parseLeaseRecord, systemLeaseEnvironment, type LeaseEnvironment } from './lease.js';
import type { LeaseRecord } from './ledger-store.js';

const now = Date.parse('2026-06-01T12:00:00.000Z');
const env: LeaseEnvironment = {
  now: () => new Date(now),
  pid: 500,
  host: 'here',
  isPidAlive: (pid) => pid !== 404,
  newToken: () => 'token-token',
  staleAfterMs: 60_000,
  processStartedAt: now - 10_000,
};
const record = (overrides: Partial<LeaseRecord>): LeaseRecord => ({
  slug: 's',
  token: 'other-token',
  pid: 42,
  host: 'here',
  startedAt: new Date(now - 5_000).toISOString(),
  heartbeatAt: new Date(now - 1_000).toISOString(),
  ...overrides,
});

describe('judgeStaleness', () => {
  it.each([
    ['a live local holder with a fresh heartbeat', {}, undefined],
    ['a dead local pid', { pid: 404 }, 'dead_pid'],
    ['a "dead" pid on another host (cannot be checked)', { pid: 404, host: 'there' }, undefined],
    ['an expired heartbeat', { heartbeatAt: new Date(now - 61_000).toISOString() }, 'stale_heartbeat'],
    [
      'an expired heartbeat on another host',
      { host: 'there', heartbeatAt: new Date(now - 61_000).toISOString() },
      'stale_heartbeat',
    ],
    [
      'our own pid from before this process started',
      { pid: 500, startedAt: new Date(now - 20_000).toISOString() },
      'dead_pid',
    ],
    ['our own pid since this process started', { pid: 500 }, undefined],
  ] as const)('judges %s', (_what, overrides, expected) => {
    expect(judgeStaleness(record(overrides), env)).toBe(expected);
  });
});

describe('parseLeaseRecord', () => {
  it('reads a lock and rejects anything else', () => {
    const lock = record({});
    expect(parseLeaseRecord(JSON.stringify(lock))).toEqual(lock);
    expect(parseLeaseRecord('{"pid":1}')).toBeUndefined();
    expect(parseLeaseRecord('not json')).toBeUndefined();
  });
});

describe('systemLeaseEnvironment', () => {
  it('describes this process, and sees it alive and a reaped pid dead', () => {
    const system = systemLeaseEnvironment();
    expect(system.pid).toBe(process.pid);
    expect(system.isPidAlive(process.pid)).toBe(true);
    expect(system.isPidAlive(2 ** 22 + 1)).toBe(false);
    expect(system.processStartedAt).toBeLessThanOrEqual(Date.now());
    expect(system.newToken()).not.toBe(system.newToken());
  });
});

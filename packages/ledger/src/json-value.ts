import { z } from 'zod';

/** Returns a copy of a JSON-able value with the keys of every object in sorted order, so output is stable. */
export function sortKeysDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeysDeep);
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(entries.map(([key, item]) => [key, sortKeysDeep(item)]));
}

/**
 * A free-form JSON object (mode state, event data, reports). Its keys are sorted on parse so that a saved
 * ledger has a stable key order regardless of how the producer built the object.
 */
export const JsonRecordSchema = z
  .record(z.string(), z.unknown())
  .overwrite((record) => sortKeysDeep(record) as Record<string, unknown>);

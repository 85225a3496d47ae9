import { err, ok, type Result } from '@allium-loop/errors';
import type { z } from 'zod';
import { LedgerSchema, type Ledger } from './ledger-schema.js';

/** Renders a zod issue path as `verdicts[2].tests.passed`, or `(root)` for the document itself. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out.length === 0 ? String(part) : `.${String(part)}`;
  }
  return out.length === 0 ? '(root)' : out;
}

/** Turns zod issues into readable lines: `path: message`. */
export function formatIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => `${formatIssuePath(issue.path)}: ${issue.message}`);
}

/**
 * Validates a parsed JSON value against the current ledger schema (no migration; see `decodeLedger`).
 * Never throws: returns the typed ledger, or readable issues such as `caps.maxTicks: Too small: expected number to be >0`.
 */
export function parseLedger(json: unknown): Result<Ledger, readonly string[]> {
  const parsed = LedgerSchema.safeParse(json);
  return parsed.success ? ok(parsed.data) : err(formatIssues(parsed.error.issues));
}

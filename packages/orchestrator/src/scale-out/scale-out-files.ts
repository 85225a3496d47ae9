import { readFile } from 'node:fs/promises';
import { decodeLedger, writeFileAtomic, type Ledger } from '@allium-loop/ledger';
import { parseStoredPlan, ScaleOutError, type StoredPlan } from './stored-plan.js';

async function readText(path: string, what: string, code: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new ScaleOutError(`Cannot read the ${what} ${path}: ${(error as Error).message}.`, {
      code,
      cause: error,
      context: { path },
    });
  }
}

/** Reads and checks a plan file written by {@link writeStoredPlan}. */
export async function readStoredPlan(path: string): Promise<StoredPlan> {
  return parseStoredPlan(await readText(path, 'plan file', 'scale_out.plan_unreadable'), path);
}

/** Writes a stored plan as JSON, atomically (a half-written plan is never read by a job). */
export async function writeStoredPlan(path: string, plan: StoredPlan): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(plan, null, 2)}\n`);
}

/** Reads one ledger file (any schema version the ledger package migrates); a bad file is a clear error. */
export async function readLedgerFile(path: string): Promise<Ledger> {
  const text = await readText(path, 'ledger', 'scale_out.ledger_unreadable');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ScaleOutError(`${path} is not a ledger: not JSON (${(error as Error).message}).`, {
      code: 'scale_out.ledger_invalid',
      cause: error,
      context: { path },
      hint: 'Pass the .allium-loop/<slug>.json files the slice jobs left, unchanged.',
    });
  }
  const decoded = decodeLedger(json);
  if (decoded.ok) return decoded.value.ledger;
  throw new ScaleOutError(`${path} is not a ledger: ${decoded.issues.slice(0, 5).join('; ')}.`, {
    code: 'scale_out.ledger_invalid',
    context: { path, issues: [...decoded.issues] },
    hint: 'Pass the .allium-loop/<slug>.json files the slice jobs left, unchanged.',
  });
}

/** Writes a merged ledger as JSON, atomically. */
export async function writeLedgerFile(path: string, ledger: Ledger): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(ledger, null, 2)}\n`);
}

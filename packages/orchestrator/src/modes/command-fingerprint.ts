import {
  applyHarnessRestore,
  checkHarness,
  fingerprintHarness,
  loadHarnessRecord,
  parseHarnessRecord,
  readHarnessConfig,
  saveHarnessRecord,
  type HarnessRecord,
} from '@allium-loop/verify';
import type { ModeStop } from './mode-context.js';
import type { ModeSession } from './mode-session.js';

/**
 * What a verify command depends on: the harness record of `@allium-loop/verify` (`fingerprintHarness`). Ledgers
 * written before it hold a plain `label → sha256` map, which is no longer checked.
 */
export type CommandFingerprint = HarnessRecord | Readonly<Record<string, string>>;

/** A fingerprint as the ledger's typed loop state stores it: a JSON object. */
export function storeFingerprint(fingerprint: CommandFingerprint): Record<string, unknown> {
  return JSON.parse(JSON.stringify(fingerprint)) as Record<string, unknown>;
}

/** A fingerprint read back from the ledger: the harness record, or the plain map an older ledger holds. */
export function readFingerprint(stored: Readonly<Record<string, unknown>>): CommandFingerprint {
  return (
    parseHarnessRecord(stored) ??
    Object.fromEntries(
      Object.entries(stored).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    )
  );
}

/**
 * Fingerprints the user's verify command and everything it runs or reads that is not the code under work (its
 * scripts and what they import or source, the package scripts and Makefile behind it, programs found through a
 * `PATH` entry in the project, runner configs, `allium-loop.yaml` and its `protect:` list). With a slug the record
 * is also kept outside the project, out of the agent's reach. Never runs anything.
 */
export async function fingerprintCommand(
  command: string,
  cwd: string,
  env: Readonly<Record<string, string | undefined>> = {},
  slug?: string,
): Promise<HarnessRecord> {
  const config = await readHarnessConfig(cwd).catch(() => ({ protect: [], allowTestChanges: [] }));
  const record = await fingerprintHarness({ cwd, commands: [command], env, protect: config.protect });
  if (slug !== undefined) await saveHarnessRecord(cwd, slug, record, env);
  return record;
}

/**
 * After an agent step: when the verify command, or anything it runs or reads, changed since `recorded` was taken
 * (an agent making the check pass by editing the check), the change is restored, journaled as a violation, and
 * the run stops. The record kept outside the project wins over the ledger's. `undefined` when unchanged.
 */
export async function guardCommand(
  session: ModeSession,
  _command: string,
  recorded: CommandFingerprint,
): Promise<ModeStop | undefined> {
  const record =
    (await loadHarnessRecord(session.cwd, session.ledger.slug, session.env))?.record ??
    parseHarnessRecord(recorded);
  if (record === undefined) return undefined;
  const check = await checkHarness(session.cwd, record);
  if (check.changed.length === 0) return undefined;
  const outcomes = await applyHarnessRestore(session.cwd, check.restore);
  const labels = check.changed.map((entry) => entry.label);
  const detail = `the verify command or what it runs changed since the run started (${labels.join(', ')}); restored`;
  const at = new Date(session.now()).toISOString();
  await session.persist(
    session.ledger,
    check.changed.map((entry) => ({
      type: 'violation' as const,
      at,
      tick: session.ledger.tick,
      kind: 'verify_command_edited',
      path: entry.path,
      detail: `${entry.label} changed (${entry.why})`,
      reverted: outcomes.some((o) => o.path === entry.path && o.applied),
    })),
  );
  return { state: 'failed', reason: 'verify_command_edited', detail };
}

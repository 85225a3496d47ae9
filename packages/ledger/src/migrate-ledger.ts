import { err, ok, type Result } from '@allium-loop/errors';
import { LEDGER_SCHEMA_VERSION, type Ledger } from './ledger-schema.js';
import { parseLedger } from './parse-ledger.js';
import { fromStoredLedger } from './stored-ledger.js';

/** One step of the migration chain: turns a document of version `from` into one of version `from + 1`. */
export interface LedgerMigration {
  readonly from: number;
  /** Receives a plain JSON object of version `from`; returns the next version's shape (may throw on nonsense). */
  readonly migrate: (document: Readonly<Record<string, unknown>>) => Record<string, unknown>;
}

/**
 * The real migration chain; append steps, never edit them.
 * - 1 → 2: the free-form `modeState` becomes the typed loop state, a union on `kind` (the run's `mode`); its keys
 *   stay where release 0.1.0 wrote them. Whether their content is valid is then checked by the schema.
 * - 2 → 3: the top level becomes the upstream Allium ledger's: `mode` is `spec-first` | `code-first` (the entry's
 *   mode) and the run kind moves to `runKind` (see `stored-ledger.ts`).
 */
export const LEDGER_MIGRATIONS: readonly LedgerMigration[] = [
  {
    from: 1,
    migrate: (document) => {
      const modeState = document['modeState'];
      if (typeof modeState !== 'object' || modeState === null || Array.isArray(modeState))
        throw new Error('modeState is not an object');
      return { ...document, modeState: { ...modeState, kind: document['mode'] } };
    },
  },
  {
    from: 2,
    migrate: (document) => {
      const entry = document['entry'];
      const mode = isRecord(entry) ? entry['mode'] : undefined;
      return { ...document, runKind: document['mode'], mode: mode ?? 'spec-first' };
    },
  },
];

/** A ledger decoded from storage, and the version it was written in when that was older than the current one. */
export interface DecodedLedger {
  readonly ledger: Ledger;
  /** The stored `schemaVersion` when a migration ran; `undefined` when the document was current. */
  readonly migratedFrom: number | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function readVersion(document: Readonly<Record<string, unknown>>): number | undefined {
  const version = document['schemaVersion'];
  return typeof version === 'number' && Number.isInteger(version) && version >= 0 ? version : undefined;
}

function runChain(
  document: Record<string, unknown>,
  from: number,
  migrations: readonly LedgerMigration[],
): Result<Record<string, unknown>, readonly string[]> {
  let current = document;
  for (let version = from; version < LEDGER_SCHEMA_VERSION; version += 1) {
    const step = migrations.find((migration) => migration.from === version);
    if (step === undefined) return err([`schemaVersion: no migration from version ${version}`]);
    try {
      current = { ...step.migrate(current), schemaVersion: version + 1 };
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : String(cause);
      return err([`schemaVersion: migration from version ${version} failed: ${message}`]);
    }
  }
  return ok(current);
}

/**
 * Decodes a parsed JSON document: migrates it step by step from its `schemaVersion` to the current one, then
 * validates it. Never throws. A document from a newer allium-loop is refused rather than guessed at.
 */
export function decodeLedger(
  json: unknown,
  migrations: readonly LedgerMigration[] = LEDGER_MIGRATIONS,
): Result<DecodedLedger, readonly string[]> {
  if (!isRecord(json)) return err(['(root): expected a JSON object']);
  const version = readVersion(json);
  if (version === undefined) return err(['schemaVersion: missing or not a non-negative integer']);
  if (version > LEDGER_SCHEMA_VERSION) {
    return err([
      `schemaVersion: ${version} was written by a newer allium-loop (this one reads up to ${LEDGER_SCHEMA_VERSION}); upgrade allium-loop`,
    ]);
  }
  const migrated = runChain(json, version, migrations);
  if (!migrated.ok) return migrated;
  const parsed = parseLedger(fromStoredLedger(migrated.value));
  if (!parsed.ok) return parsed;
  return ok({ ledger: parsed.value, migratedFrom: version === LEDGER_SCHEMA_VERSION ? undefined : version });
}

import { z } from 'zod';
import { LEDGER_SCHEMA_VERSION } from './ledger-schema.js';
import { StoredLedgerSchema } from './stored-ledger.js';

/** Where the generated JSON Schema is committed, relative to the repository root. */
export const LEDGER_JSON_SCHEMA_PATH = 'docs/schemas/ledger.schema.json';

/**
 * Renders the JSON Schema (draft 2020-12) of the ledger from the zod schema, as the exact text committed at
 * {@link LEDGER_JSON_SCHEMA_PATH}. Pure and deterministic.
 */
export function renderLedgerJsonSchema(): string {
  const schema = z.toJSONSchema(StoredLedgerSchema, { target: 'draft-2020-12', io: 'output' });
  const document = {
    ...schema,
    $id: 'https://allium-loop.dev/schemas/ledger.schema.json',
    title: `allium-loop ledger (.allium-loop/<slug>.json), schemaVersion ${LEDGER_SCHEMA_VERSION}`,
    description:
      'Generated from packages/ledger/src/ledger-schema.ts by packages/ledger/src/scripts/write-ledger-json-schema.ts; do not edit.',
  };
  return `${JSON.stringify(document, null, 2)}\n`;
}

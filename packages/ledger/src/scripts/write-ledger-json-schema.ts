/**
 * Writes docs/schemas/ledger.schema.json from the zod schema. Run from the repository root:
 * `node --conditions=development --import tsx packages/ledger/src/scripts/write-ledger-json-schema.ts`
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { LEDGER_JSON_SCHEMA_PATH, renderLedgerJsonSchema } from '../ledger-json-schema.js';

const target = fileURLToPath(new URL(`../../../../${LEDGER_JSON_SCHEMA_PATH}`, import.meta.url));
await writeFile(target, renderLedgerJsonSchema(), 'utf8');
process.stdout.write(`wrote ${target}\n`);

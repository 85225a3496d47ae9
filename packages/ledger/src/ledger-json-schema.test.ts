import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { LEDGER_JSON_SCHEMA_PATH, renderLedgerJsonSchema } from './ledger-json-schema.js';

describe('docs/schemas/ledger.schema.json', () => {
  it('is up to date with the zod schema (regenerate with src/scripts/write-ledger-json-schema.ts)', async () => {
    const committed = await readFile(
      fileURLToPath(new URL(`../../../${LEDGER_JSON_SCHEMA_PATH}`, import.meta.url)),
      'utf8',
    );
    expect(committed).toBe(renderLedgerJsonSchema());
  });

  it('describes every top-level field as required', () => {
    const schema = JSON.parse(renderLedgerJsonSchema()) as { required: string[] };
    expect(schema.required).toEqual(
      expect.arrayContaining([
        'schemaVersion',
        'goal',
        'slug',
        'caps',
        'spent',
        'verdicts',
        'intents',
        'history',
      ]),
    );
  });
});

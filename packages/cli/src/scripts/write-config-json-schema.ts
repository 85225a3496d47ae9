// Writes docs/schemas/config.schema.json from the zod schema of allium-loop.yaml.
// Run: node --conditions=development --import tsx packages/cli/src/scripts/write-config-json-schema.ts
import { writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { ConfigSchema } from '../config/config-schema.js';

const target = new URL('../../../../docs/schemas/config.schema.json', import.meta.url);
await writeFile(
  target,
  `${JSON.stringify(z.toJSONSchema(ConfigSchema, { unrepresentable: 'any' }), null, 2)}\n`,
);

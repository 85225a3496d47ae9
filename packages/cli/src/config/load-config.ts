import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { err, ok, type Result } from '@allium-loop/errors';
import { parseDocument } from 'yaml';
import { ConfigSchema, type Config } from './config-schema.js';

/** The config file's name, at the project root. */
export const CONFIG_FILE = 'allium-loop.yaml';

/**
 * Reads and validates `allium-loop.yaml` in `cwd`. An absent file is an empty config. Never throws: YAML syntax
 * errors and schema issues come back as lines naming the file, the key path and what is wrong.
 */
export async function loadConfig(cwd: string): Promise<Result<Config>> {
  const file = join(cwd, CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return ok({});
    return err([`${file}: cannot be read: ${(error as Error).message}`]);
  }
  const document = parseDocument(text, { prettyErrors: true });
  if (document.errors.length > 0) {
    return err(document.errors.map((e) => `${file}: ${e.message.split('\n')[0] ?? e.message}`));
  }
  const value: unknown = document.toJS() ?? {};
  const parsed = ConfigSchema.safeParse(value);
  if (parsed.success) return ok(parsed.data);
  return err(
    parsed.error.issues.map((issue) => {
      const path = issue.path.map(String).join('.');
      return `${file}: ${path === '' ? '(top level)' : path}: ${issue.message}`;
    }),
  );
}

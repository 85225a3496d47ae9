import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isMap, parseDocument } from 'yaml';
import { VerifyError } from '../verify-error.js';

/** The project configuration file, at the project root. */
export const CONFIG_FILE = 'allium-loop.yaml';

/**
 * Reads the `testCommand` key of `allium-loop.yaml` in `cwd`. Returns `undefined` when the file or the key is
 * absent. Only this key is read; the rest of the file belongs to the CLI's config schema.
 * Throws {@link VerifyError} `verify.config_invalid` when the file is not valid YAML or the key is not a
 * non-empty string.
 */
export async function readTestCommandConfig(cwd: string): Promise<string | undefined> {
  const path = join(cwd, CONFIG_FILE);
  const text = await readOptional(path);
  if (text === undefined) return undefined;
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    throw new VerifyError(`${path} is not valid YAML: ${document.errors[0]!.message}`, {
      code: 'verify.config_invalid',
      context: { file: path },
      hint: 'Fix the YAML syntax, or delete the file and run again.',
    });
  }
  const value: unknown = isMap(document.contents) ? document.get('testCommand') : undefined;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string' || value.trim() === '') {
    throw new VerifyError(`${path}: testCommand must be a non-empty string`, {
      code: 'verify.config_invalid',
      context: { file: path },
      hint: 'Write it as, e.g., `testCommand: npm test`.',
    });
  }
  return value.trim();
}

/**
 * Writes `testCommand` into `allium-loop.yaml` in `cwd`, creating the file when needed and preserving every
 * other key and comment. The write is atomic (temp file + rename) and skipped when nothing changes.
 * Throws {@link VerifyError} `verify.config_invalid` when the existing file is not a YAML mapping.
 */
export async function writeTestCommandConfig(cwd: string, command: string): Promise<void> {
  const path = join(cwd, CONFIG_FILE);
  const before = (await readOptional(path)) ?? '';
  const document = parseDocument(before);
  if (document.errors.length > 0 || (document.contents !== null && !isMap(document.contents))) {
    throw new VerifyError(`${path} is not a YAML mapping; testCommand was not written`, {
      code: 'verify.config_invalid',
      context: { file: path },
      hint: 'Fix the file so it is a mapping of keys to values.',
    });
  }
  document.set('testCommand', command);
  const after = document.toString();
  if (after === before) return;
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, after, 'utf8');
  await rename(temp, path);
}

async function readOptional(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new VerifyError(`cannot read ${path}`, {
      code: 'verify.config_invalid',
      cause: error,
      context: { file: path },
    });
  }
}

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@allium-loop/ledger';
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
  await writeFileAtomic(path, after);
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

/** The keys of `allium-loop.yaml` that shape the engine's harness guard. */
export interface HarnessConfig {
  /** Test paths or globs whose weakening the user allows (each allowed change is journaled). */
  readonly allowTestChanges: readonly string[];
  /** Extra project files the engine protects like the test command's own files. */
  readonly protect: readonly string[];
}

/**
 * Reads `allowTestChanges` and `protect` (lists of strings) from `allium-loop.yaml` in `cwd`; absent keys are empty.
 * Throws {@link VerifyError} `verify.config_invalid` when the file is not valid YAML or a key is not a list of
 * strings.
 */
export async function readHarnessConfig(cwd: string): Promise<HarnessConfig> {
  const path = join(cwd, CONFIG_FILE);
  const text = await readOptional(path);
  if (text === undefined) return { allowTestChanges: [], protect: [] };
  const document = parseDocument(text);
  if (document.errors.length > 0) {
    throw new VerifyError(`${path} is not valid YAML: ${document.errors[0]!.message}`, {
      code: 'verify.config_invalid',
      context: { file: path },
      hint: 'Fix the YAML syntax, or delete the file and run again.',
    });
  }
  const list = (key: string): string[] => {
    const value: unknown = isMap(document.contents) ? document.toJS()?.[key] : undefined;
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string' || v.trim() === '')) {
      throw new VerifyError(`${path}: ${key} must be a list of paths`, {
        code: 'verify.config_invalid',
        context: { file: path },
        hint: `Write it as, e.g., \`${key}: [test/legacy.test.js]\`.`,
      });
    }
    return (value as string[]).map((v) => v.trim());
  };
  return { allowTestChanges: list('allowTestChanges'), protect: list('protect') };
}

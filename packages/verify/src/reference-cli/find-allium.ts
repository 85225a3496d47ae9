import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, join } from 'node:path';

/**
 * Finds the reference `allium` binary on `PATH` (the first executable file named `allium`), or `undefined` when
 * there is none. Absence is normal: the reference CLI is optional. Never throws.
 */
export async function findAllium(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<string | undefined> {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, 'allium');
    if (await isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** The temp-file name used while `path` is written: hidden, unique, in the same directory, ending in `.tmp`. */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
}

/** Flushes a directory's entries (a rename or a new file) to disk. Ignored where directories cannot be opened. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch {
    // Some platforms (Windows) cannot fsync a directory; the rename is still atomic there.
  } finally {
    await handle?.close();
  }
}

/** Writes `text` to a new file that must not exist yet, and fsyncs it. */
export async function writeNewFileSynced(path: string, text: string): Promise<void> {
  const handle = await open(path, 'wx');
  try {
    await handle.writeFile(text, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Runs the final rename of an atomic write, e.g. only after checking the lease under its mutex. */
export type CommitGuard = (commit: () => Promise<void>) => Promise<void>;

/**
 * Replaces `path` with `text` atomically (creating its folder): a temp file in the same directory, fsync, the rename (run through
 * `guard`, which may refuse by throwing), fsync of the directory. A crash leaves either the old or the new
 * content, plus at most a temp file. When anything throws, the temp file is removed and `path` is unchanged.
 */
export async function writeFileAtomic(
  path: string,
  text: string,
  guard: CommitGuard = (commit) => commit(),
): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temp = tempPathFor(path);
  try {
    await writeNewFileSynced(temp, text);
    await guard(() => rename(temp, path));
  } catch (cause) {
    await rm(temp, { force: true });
    throw cause;
  }
  await fsyncDirectory(dirname(path));
}

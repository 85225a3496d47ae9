import { open, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { fsyncDirectory } from './atomic-write.js';
import { journalSeparator, parseJournalText } from './ledger-codec.js';
import type { JournalRead } from './ledger-store.js';

/**
 * Appends complete lines to a journal file in one write. When the file ends in a torn line (a crash mid-append),
 * a newline is written first so the new events start on a line of their own. With `sync`, the file (and, for a
 * new file, its directory) is fsynced.
 */
export async function appendJournalFile(path: string, lines: string, sync: boolean): Promise<void> {
  const handle = await open(path, 'a+');
  let created = false;
  try {
    const { size } = await handle.stat();
    created = size === 0;
    let lastChar: string | undefined;
    if (size > 0) {
      const buffer = Buffer.alloc(1);
      await handle.read(buffer, 0, 1, size - 1);
      lastChar = buffer.toString('utf8');
    }
    await handle.write(journalSeparator(lastChar) + lines);
    if (sync) await handle.sync();
  } finally {
    await handle.close();
  }
  if (sync && created) await fsyncDirectory(dirname(path));
}

/** Reads and parses a journal file; an absent file reads as empty. */
export async function readJournalFile(path: string): Promise<JournalRead> {
  try {
    return parseJournalText(await readFile(path, 'utf8'));
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return parseJournalText('');
    throw cause;
  }
}

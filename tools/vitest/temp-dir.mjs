// A Vitest global setup every package's vitest.config.ts names: the run's temporary files (the temp git repositories,
// agent homes, replay scripts and everything the processes they start write under the system's temporary directory)
// go into one directory of their own, removed when the run ends. Without it a full `npm test` left about 900 files
// and directories in /tmp (some 170 MB), since tests make theirs with mkdtemp and most never removed them.
//
// It points TMPDIR (and TMP, TEMP) at that directory before any test worker starts: the workers and every process a
// test starts inherit it, and os.tmpdir() reads it on each call. ALLIUM_LOOP_KEEP_TEST_TMP=1 keeps the directory (its
// path is printed) to look at what a failing test left.
import { chmodSync, lstatSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NAMES = ['TMPDIR', 'TMP', 'TEMP'];

/** Makes the run's directory and points the temporary-directory variables at it; returns the teardown. */
export default function setup() {
  const saved = NAMES.map((name) => [name, process.env[name]]);
  const dir = mkdtempSync(join(tmpdir(), 'al-test-'));
  // Others may pass through it to a path they know but not list it, as through /tmp itself: a test that runs a child
  // as another user (ensure-git-ignored.test.ts, as `nobody` when run as root) opens its own directory inside to it.
  chmodSync(dir, 0o711);
  for (const name of NAMES) process.env[name] = dir;
  return () => {
    for (const [name, value] of saved) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    if (process.env.ALLIUM_LOOP_KEEP_TEST_TMP === '1')
      process.stderr.write(`test temporary files kept in ${dir}\n`);
    else remove(dir);
  };
}

/**
 * Removes the directory. A test that made a directory unreadable or read-only and did not restore it would make a
 * plain recursive removal fail for a user who is not root: then every directory of the tree is opened up (symbolic
 * links are not followed) and the removal tried again.
 */
function remove(dir) {
  try {
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  } catch {
    openUp(dir);
    rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  }
}

function openUp(dir) {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (lstatSync(path).isDirectory()) openUp(path);
  }
}

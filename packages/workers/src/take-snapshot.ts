import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { FileSnapshot, WorkspaceSnapshot } from './detect-violations.js';

const SKIPPED_DIRS = new Set([
  'node_modules',
  '.git',
  '.allium-loop',
  'dist',
  'build',
  'coverage',
  'out-tsc',
  '.nx',
  'target',
  'vendor',
  '__pycache__',
  '.venv',
  'venv',
  '.next',
  '.turbo',
]);
const MAX_FILE_BYTES = 1_000_000;
const MAX_FILES = 20_000;
const CODE_EXT = /\.(?:[cm]?[jt]sx?|py|go|rb|rs|java|kt|cs|php|ex|exs)$/;

/** Whether a project-relative path looks like a test file in any common convention. */
export function isTestPath(path: string): boolean {
  const posix = path.split(sep).join('/');
  if (!CODE_EXT.test(posix)) return false;
  const base = posix.slice(posix.lastIndexOf('/') + 1);
  return (
    /\.(?:test|spec)\.[^.]+$/.test(base) ||
    /^test_.*\.py$/.test(base) ||
    /_test\.(?:py|go)$/.test(base) ||
    /_spec\.rb$/.test(base) ||
    /(?:^|\/)(?:tests?|__tests__|spec)\//.test(posix)
  );
}

/** SHA-256 of a text, hex. */
export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

async function walk(root: string, dir: string, out: string[]): Promise<void> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) {
    if (out.length >= MAX_FILES) return;
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name)) await walk(root, join(dir, entry.name), out);
    } else if (entry.isFile()) {
      out.push(relative(root, join(dir, entry.name)).split(sep).join('/'));
    }
  }
}

async function readSnapshot(root: string, path: string): Promise<FileSnapshot | undefined> {
  try {
    const info = await stat(join(root, path));
    if (!info.isFile() || info.size > MAX_FILE_BYTES) return undefined;
    const text = await readFile(join(root, path), 'utf8');
    return { text, sha256: sha256(text) };
  } catch {
    return undefined;
  }
}

/**
 * Reads every `.allium` file, every test file and every other source file under `cwd` (skipping `node_modules`, `.git`, `.allium-loop`,
 * build output and files over 1 MB), plus `alsoTests` — protected tests wherever they live. Missing files are
 * simply absent from the snapshot.
 */
export async function takeSnapshot(
  cwd: string,
  alsoTests: readonly string[] = [],
): Promise<WorkspaceSnapshot> {
  const paths: string[] = [];
  await walk(cwd, cwd, paths);
  const spec = new Map<string, FileSnapshot>();
  const tests = new Map<string, FileSnapshot>();
  const code = new Map<string, FileSnapshot>();
  for (const path of paths.sort()) {
    const kind = path.endsWith('.allium')
      ? spec
      : isTestPath(path)
        ? tests
        : CODE_EXT.test(path)
          ? code
          : undefined;
    if (kind === undefined) continue;
    const file = await readSnapshot(cwd, path);
    if (file !== undefined) kind.set(path, file);
  }
  for (const path of alsoTests) {
    if (tests.has(path)) continue;
    const file = await readSnapshot(cwd, path);
    if (file !== undefined) tests.set(path, file);
  }
  return { spec, tests, code };
}

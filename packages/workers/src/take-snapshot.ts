import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { systemPath, walkProject } from '@allium-loop/verify';
import type { FileSnapshot, WorkspaceSnapshot } from './detect-violations.js';

const MAX_FILE_BYTES = 1_000_000;
const MAX_FILES = 20_000;
const CODE_EXT = /\.(?:[cm]?[jt]sx?|py|go|rb|rs|java|kt|cs|php|swift|scala|clj|ex|exs)$/;

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

/**
 * The one rule for what a project file is: `spec` (`.allium`), `tests` (see {@link isTestPath}), `code` (any other
 * source file), or `undefined` (not read). The workers' snapshots and the loop's file lists both sort by it.
 */
export function classifyProjectPath(path: string): 'spec' | 'tests' | 'code' | undefined {
  if (path.endsWith('.allium')) return 'spec';
  if (isTestPath(path)) return 'tests';
  return CODE_EXT.test(path.split(sep).join('/')) ? 'code' : undefined;
}

/** SHA-256 of a text, hex. */
export function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

async function readSnapshot(root: string, path: string): Promise<FileSnapshot | undefined> {
  // A name that is not UTF-8 arrives from the walker with U+FFFD in it: read by its bytes (see systemPath).
  const file = systemPath(join(root, path)) ?? join(root, path);
  try {
    const info = await stat(file);
    if (!info.isFile() || info.size > MAX_FILE_BYTES) return undefined;
    const text = await readFile(file, 'utf8');
    return { text, sha256: sha256(text) };
  } catch {
    return undefined;
  }
}

/**
 * Reads every `.allium` file, every test file and every other source file under `cwd` (found by `walkProject` of
 * `@allium-loop/verify`, which skips dependencies, build output and `.allium-loop/`; files over 1 MB are left
 * out), plus `alsoTests` — protected tests wherever they live. Missing files are simply absent from the snapshot.
 */
export async function takeSnapshot(
  cwd: string,
  alsoTests: readonly string[] = [],
): Promise<WorkspaceSnapshot> {
  const { files: paths } = await walkProject(cwd, { limit: MAX_FILES });
  const spec = new Map<string, FileSnapshot>();
  const tests = new Map<string, FileSnapshot>();
  const code = new Map<string, FileSnapshot>();
  const byKind = { spec, tests, code };
  for (const path of paths) {
    const role = classifyProjectPath(path);
    if (role === undefined) continue;
    const kind = byKind[role];
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

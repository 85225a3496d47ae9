import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';

const SKIP = new Set([
  'node_modules',
  '.git',
  '.allium-loop',
  'dist',
  'build',
  'out',
  'coverage',
  '.nx',
  'target',
  '__pycache__',
  '.venv',
]);
const SOURCE = /\.(?:[cm]?[jt]sx?|py|go|rs|java|kt|rb|php|cs|swift|scala|clj|ex|exs)$/;
const TEST =
  /(?:^|\/)(?:tests?|__tests__|spec)\/|\.(?:test|spec)\.[^/]+$|(?:^|\/)test_[^/]+\.py$|_test\.(?:go|py)$/;

/** The project's files by role, paths relative to the root with `/` separators. */
export interface ProjectFiles {
  readonly spec: readonly string[];
  readonly tests: readonly string[];
  readonly code: readonly string[];
}

/** Lists spec, test and code files under `root`, skipping dependencies, build output and `.allium-loop/`. */
export async function listProjectFiles(root: string): Promise<ProjectFiles> {
  const spec: string[] = [];
  const tests: string[] = [];
  const code: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.isDirectory()) {
        if (!SKIP.has(entry.name)) await walk(join(dir, entry.name));
        continue;
      }
      if (!entry.isFile()) continue;
      const path = relative(root, join(dir, entry.name)).split(sep).join('/');
      if (path.endsWith('.allium')) spec.push(path);
      else if (TEST.test(path) && SOURCE.test(path)) tests.push(path);
      else if (SOURCE.test(path)) code.push(path);
    }
  };
  await walk(root);
  return { spec: spec.sort(), tests: tests.sort(), code: code.sort() };
}

/** Reads spec files as `{ path, text }`, relative to `root`. */
export async function readSpecSources(
  root: string,
  paths: readonly string[],
): Promise<{ path: string; text: string }[]> {
  return Promise.all(paths.map(async (path) => ({ path, text: await readFile(join(root, path), 'utf8') })));
}

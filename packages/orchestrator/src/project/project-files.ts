import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { walkProject } from '@allium-loop/verify';

const SOURCE = /\.(?:[cm]?[jt]sx?|py|go|rs|java|kt|rb|php|cs|swift|scala|clj|ex|exs)$/;
const TEST =
  /(?:^|\/)(?:tests?|__tests__|spec)\/|\.(?:test|spec)\.[^/]+$|(?:^|\/)test_[^/]+\.py$|_test\.(?:go|py)$/;

/** The project's files by role, paths relative to the root with `/` separators. */
export interface ProjectFiles {
  readonly spec: readonly string[];
  readonly tests: readonly string[];
  readonly code: readonly string[];
}

/** Lists spec, test and code files under `root`, with the engine's one project walker (`walkProject`). */
export async function listProjectFiles(root: string): Promise<ProjectFiles> {
  const spec: string[] = [];
  const tests: string[] = [];
  const code: string[] = [];
  for (const path of (await walkProject(root)).files) {
    if (path.endsWith('.allium')) spec.push(path);
    else if (TEST.test(path) && SOURCE.test(path)) tests.push(path);
    else if (SOURCE.test(path)) code.push(path);
  }
  return { spec, tests, code };
}

/** Reads spec files as `{ path, text }`, relative to `root`. */
export async function readSpecSources(
  root: string,
  paths: readonly string[],
): Promise<{ path: string; text: string }[]> {
  return Promise.all(paths.map(async (path) => ({ path, text: await readFile(join(root, path), 'utf8') })));
}

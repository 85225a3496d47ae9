import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { systemPath, walkProject } from '@allium-loop/verify';
import { classifyProjectPath } from '@allium-loop/workers';

/** The project's files by role, paths relative to the root with `/` separators. */
export interface ProjectFiles {
  readonly spec: readonly string[];
  readonly tests: readonly string[];
  readonly code: readonly string[];
}

/**
 * Lists spec, test and code files under `root`, with the engine's one project walker (`walkProject`) and the one
 * classification the workers' snapshots use (`classifyProjectPath`).
 */
export async function listProjectFiles(root: string): Promise<ProjectFiles> {
  const files = { spec: [] as string[], tests: [] as string[], code: [] as string[] };
  for (const path of (await walkProject(root)).files) {
    const role = classifyProjectPath(path);
    if (role !== undefined) files[role].push(path);
  }
  return files;
}

/** Reads spec files as `{ path, text }`, relative to `root`. */
export async function readSpecSources(
  root: string,
  paths: readonly string[],
): Promise<{ path: string; text: string }[]> {
  // A name that is not UTF-8 arrives from the walker with U+FFFD in it: read by its bytes (see systemPath).
  return Promise.all(
    paths.map(async (path) => ({
      path,
      text: await readFile(systemPath(join(root, path)) ?? join(root, path), 'utf8'),
    })),
  );
}

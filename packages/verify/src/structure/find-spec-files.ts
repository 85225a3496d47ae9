import { readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';

const SKIPPED = new Set([
  'node_modules',
  '.git',
  '.allium-loop',
  'dist',
  'target',
  '.venv',
  'venv',
  '__pycache__',
]);

/**
 * Every `*.allium` file under `cwd` (recursively, skipping dependency, build and VCS directories), as paths
 * relative to `cwd` with `/` separators, sorted.
 */
export async function findSpecFiles(cwd: string): Promise<string[]> {
  const found: string[] = [];
  await walk(cwd, cwd, found);
  return found.sort();
}

async function walk(root: string, dir: string, found: string[]): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory() && !SKIPPED.has(entry.name)) await walk(root, path, found);
    else if (entry.isFile() && entry.name.endsWith('.allium'))
      found.push(relative(root, path).split('\\').join('/'));
  }
}

import type { Dirent } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { classifyPath, SKIPPED_DIRECTORIES } from './classify-path.js';
import { globToRegExp } from './glob-to-regexp.js';
import { ProbeError } from './probe-error.js';

/** The spec globs used when none are configured. */
export const DEFAULT_SPEC_GLOBS: readonly string[] = ['**/*.allium'];

/** What {@link probeProject} looks at. */
export interface ProbeOptions {
  /** The project root; every reported path is relative to it, `/`-separated. */
  readonly cwd: string;
  /** Globs that name spec files (default {@link DEFAULT_SPEC_GLOBS}). */
  readonly specGlobs?: readonly string[];
  /** Whether a test command was found — test-command discovery is its own step; pass its answer or a callback. */
  readonly hasTestCommand: boolean | (() => boolean | Promise<boolean>);
}

/** What the probe found; it has the shape of entry detection's `ProjectState` plus a little evidence. */
export interface ProjectProbe {
  /** Spec files matching the globs, sorted. */
  readonly specFiles: readonly string[];
  /** Whether a source file other than specs, tests, docs and config is present. */
  readonly hasCode: boolean;
  readonly hasTestCommand: boolean;
  /** Up to five code files found, sorted, so the caller can say why it thinks code is present. */
  readonly codeSample: readonly string[];
  /** Directories that could not be read and were skipped, sorted. */
  readonly unreadable: readonly string[];
}

interface Walk {
  readonly files: string[];
  readonly unreadable: string[];
}

async function listDirectory(root: string, relative: string, walk: Walk): Promise<Dirent[] | undefined> {
  try {
    return await readdir(join(root, relative), { withFileTypes: true });
  } catch (error) {
    if (relative === '')
      throw new ProbeError(`Cannot read the project directory ${root}.`, {
        code: 'verify.probe_failed',
        cause: error,
        context: { cwd: root },
        hint: 'Run allium-loop from a readable project directory.',
      });
    walk.unreadable.push(relative);
    return undefined;
  }
}

/** Every regular file under `root` outside skipped directories, without following symbolic links. */
async function walkFiles(root: string): Promise<Walk> {
  const walk: Walk = { files: [], unreadable: [] };
  const pending = [''];
  while (pending.length > 0) {
    const relative = pending.pop()!;
    const entries = await listDirectory(root, relative, walk);
    for (const entry of entries ?? []) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory() && !SKIPPED_DIRECTORIES.has(entry.name)) pending.push(path);
      else if (entry.isFile()) walk.files.push(path);
    }
  }
  walk.files.sort();
  walk.unreadable.sort();
  return walk;
}

/**
 * Finds the spec files under `cwd` that match `globs` (default `**\/*.allium`), skipping dependencies, VCS data
 * and build output. Sorted, `/`-separated, relative to `cwd`. Throws a {@link ProbeError} when `cwd` cannot be read.
 */
export async function findSpecFiles(
  cwd: string,
  globs: readonly string[] = DEFAULT_SPEC_GLOBS,
): Promise<string[]> {
  const patterns = globs.map(globToRegExp);
  return (await walkFiles(cwd)).files.filter((path) => patterns.some((pattern) => pattern.test(path)));
}

/**
 * Looks at a project for entry detection: which spec files it has, whether it has code (a source file that is
 * not a spec, test, doc or config), and — from the caller — whether a test command was found. One walk of the
 * tree; symbolic links are not followed; unreadable subdirectories are skipped and listed. Throws a
 * {@link ProbeError} (`verify.probe_failed`) when `cwd` itself cannot be read.
 */
export async function probeProject(options: ProbeOptions): Promise<ProjectProbe> {
  const patterns = (options.specGlobs ?? DEFAULT_SPEC_GLOBS).map(globToRegExp);
  const walk = await walkFiles(options.cwd);
  const specFiles = walk.files.filter((path) => patterns.some((pattern) => pattern.test(path)));
  const specs = new Set(specFiles);
  const code = walk.files.filter((path) => !specs.has(path) && classifyPath(path) === 'code');
  const hasTestCommand =
    typeof options.hasTestCommand === 'function' ? await options.hasTestCommand() : options.hasTestCommand;
  return {
    specFiles,
    hasCode: code.length > 0,
    hasTestCommand,
    codeSample: code.slice(0, 5),
    unreadable: walk.unreadable,
  };
}

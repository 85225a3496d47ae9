import type { Dirent } from 'node:fs';
import { opendirSync, readdir as readdirCallback, readdirSync, realpathSync, statSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { classifyPath, SKIPPED_DIRECTORIES } from './classify-path.js';
import { globToRegExp } from './glob-to-regexp.js';
import { ProbeError } from './probe-error.js';
import { systemPath } from './system-path.js';

export { systemPath } from './system-path.js';

/**
 * fs/promises' readdir, from the callback API: Node 20 loads fs/promises with readline, its file streams and its
 * watchers, which `spec check` (whose one-shot start-up a user waits for) otherwise never needs.
 */
const readdir = promisify(readdirCallback);

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

/** What {@link walkProject} found. */
export interface ProjectWalk {
  /**
   * Every regular file outside skipped directories, relative to the root, `/`-separated: sorted, or with
   * `order: 'directory'` in the order the file system lists them.
   */
  readonly files: readonly string[];
  /** Directories that could not be read and were skipped (`''` for the root itself), sorted. */
  readonly unreadable: readonly string[];
  /** Whether the walk stopped at the file limit. */
  readonly truncated: boolean;
  /**
   * With `followLinks`, the first link to a folder left unfollowed because {@link FOLLOWED_LINKS_LIMIT} folders had
   * been entered through links already (links that fan out level after level reach exponentially many paths).
   */
  readonly linkLimitAt?: string;
}

/** How many folders a walk with `followLinks` enters through links before it follows no more. */
export const FOLLOWED_LINKS_LIMIT = 10_000;

/** What {@link walkProject} may be told. */
export interface WalkOptions {
  /** Stop after this many files. */
  readonly limit?: number;
  /** The names of the directories not to enter (default {@link SKIPPED_DIRECTORIES}). */
  readonly skip?: ReadonlySet<string>;
  /**
   * `sorted` (the default): the files sorted by path. `directory`: depth first, each directory's entries in the order
   * the file system lists them (readdir(3)'s, which Node's `readdir` sorts away), a folder's files where the folder
   * is: the order the reference checker's `std::fs::read_dir` walk reports a folder in.
   */
  readonly order?: 'sorted' | 'directory';
  /**
   * Whether symbolic links are taken for what they lead to, as the reference checker takes them: a link to a
   * directory is searched like one (unless it leads back to a directory the walk is inside of, which would never end;
   * the reference goes round until the system refuses, about 40 levels), and any other link (to a file, or broken,
   * which the caller then fails to read) is listed as a file. Otherwise no link is listed or followed.
   */
  readonly followLinks?: boolean;
  /** How many folders `followLinks` enters through links at most (default {@link FOLLOWED_LINKS_LIMIT}). */
  readonly followedLinksLimit?: number;
}

/**
 * The engine's one project walker: every regular file under `root`, skipping the directories of
 * {@link SKIPPED_DIRECTORIES} (dependencies, VCS data, build output, caches, `.allium-loop/`), without following
 * symbolic links (unless `followLinks`). Spec discovery, the probe, the loop's file lists and the workers' snapshots
 * all use it, so they agree on what belongs to the project. Unreadable directories are listed, not fatal; `limit` stops the walk.
 * `skip` replaces the skipped directories' names: `spec check <folder>` searches a folder the user names whole, as the
 * reference checker does (an empty set), and in its order.
 */
export async function walkProject(root: string, options: WalkOptions = {}): Promise<ProjectWalk> {
  const files: string[] = [];
  const unreadable: string[] = [];
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const skip = options.skip ?? SKIPPED_DIRECTORIES;
  // A walk that follows links (the `spec` commands on a folder the user names: one-shot, with nothing else to do
  // meanwhile) makes every file-system call synchronously. An asynchronous call is two hand-offs between threads
  // (libuv's pool and back), and on a machine busy with other work each hand-off waits for a time slice: links that
  // fan out cost some 30,000 calls, which took over 120 s in a busy CI run where the walk itself takes about 1 s.
  const followLinks = options.followLinks === true;
  const list = options.order === 'directory' ? inDirectoryOrder : followLinks ? inAnyOrderNow : inAnyOrder;
  let truncated = false;
  let followed = 0;
  let linkLimitAt: string | undefined;
  // The real paths of the directories the walk is inside of, the one it lists last: where a followed link may not lead.
  const inside: string[] = [];
  const visit = async (relative: string, real: string): Promise<void> => {
    let entries: Dirent[];
    try {
      // A folder whose name is not UTF-8 arrives with U+FFFD in it: listed by its bytes (see systemPath).
      const folder = join(root, relative);
      entries = await list(systemPath(folder) ?? folder);
    } catch {
      unreadable.push(relative);
      return;
    }
    inside.push(real);
    for (const entry of entries) {
      if (truncated) break;
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      let isFile = entry.isFile();
      if (entry.isDirectory()) {
        if (!skip.has(entry.name)) await visit(path, join(real, entry.name));
      } else if (followLinks && entry.isSymbolicLink()) {
        const directory = linkedDirectory(root, path);
        if (directory === undefined) isFile = true;
        else if (skip.has(entry.name) || inside.includes(directory)) continue;
        else if (followed >= (options.followedLinksLimit ?? FOLLOWED_LINKS_LIMIT)) linkLimitAt ??= path;
        else {
          followed += 1;
          await visit(path, directory);
        }
      }
      if (!isFile) continue;
      if (files.length >= limit) {
        truncated = true;
        break;
      }
      files.push(path);
    }
    inside.pop();
  };
  // Only a followed link needs the real path of where the walk is: a directory listed (not a link) is its parent's.
  await visit('', followLinks ? (realPath(root) ?? root) : root);
  if (options.order !== 'directory') files.sort();
  const walk = { files, unreadable: unreadable.sort(), truncated };
  return linkLimitAt === undefined ? walk : { ...walk, linkLimitAt };
}

/** The real path of the directory the symbolic link `path` leads to; undefined when it leads to none (or nowhere). */
function linkedDirectory(root: string, path: string): string | undefined {
  const linked = join(root, path);
  try {
    if (!statSync(linked).isDirectory()) return undefined;
  } catch {
    return undefined;
  }
  return realPath(linked) ?? linked;
}

/**
 * Which file or folder `path` is, symbolic links and `..` resolved (realpath(3), as the reference's `canonicalize`);
 * undefined when it names nothing. Synchronous: see {@link walkProject}'s link-following walk.
 */
export function realPath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

const inAnyOrder = (directory: string | Buffer): Promise<Dirent[]> =>
  readdir(directory, { withFileTypes: true });

const inAnyOrderNow = async (directory: string | Buffer): Promise<Dirent[]> =>
  readdirSync(directory, { withFileTypes: true });

/** A directory's entries as readdir(3) gives them (an open directory read to its end; `readdir` sorts them). */
async function inDirectoryOrder(directory: string | Buffer): Promise<Dirent[]> {
  const dir = opendirSync(directory);
  try {
    const entries: Dirent[] = [];
    for (let entry = dir.readSync(); entry !== null; entry = dir.readSync()) entries.push(entry);
    return entries;
  } finally {
    dir.closeSync();
  }
}

/** Walks `root` for the probe and spec discovery, which refuse a project directory they cannot read. */
async function walkReadable(root: string): Promise<ProjectWalk> {
  const walk = await walkProject(root);
  if (walk.unreadable[0] === '') {
    const cause = await readdir(root).then(
      () => undefined,
      (error: unknown) => error,
    );
    throw new ProbeError(`Cannot read the project directory ${root}.`, {
      code: 'verify.probe_failed',
      cause,
      context: { cwd: root },
      hint: 'Run allium-loop from a readable project directory.',
    });
  }
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
  return (await walkReadable(cwd)).files.filter((path) => patterns.some((pattern) => pattern.test(path)));
}

/**
 * Looks at a project for entry detection: which spec files it has, whether it has code (a source file that is
 * not a spec, test, doc or config), and — from the caller — whether a test command was found. One walk of the
 * tree; symbolic links are not followed; unreadable subdirectories are skipped and listed. Throws a
 * {@link ProbeError} (`verify.probe_failed`) when `cwd` itself cannot be read.
 */
export async function probeProject(options: ProbeOptions): Promise<ProjectProbe> {
  const patterns = (options.specGlobs ?? DEFAULT_SPEC_GLOBS).map(globToRegExp);
  const walk = await walkReadable(options.cwd);
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
    unreadable: [...walk.unreadable],
  };
}

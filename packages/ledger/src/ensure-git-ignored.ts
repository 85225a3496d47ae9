import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** The entry allium-loop adds to `.gitignore`: the state directory, at any depth. */
export const GITIGNORE_ENTRY = '.allium-loop/';

/** What {@link ensureGitIgnored} found or did. */
export type GitIgnoreOutcome =
  | { readonly kind: 'not_a_repo'; readonly detail: string }
  | { readonly kind: 'check_failed'; readonly root: string; readonly detail: string }
  | { readonly kind: 'already_ignored'; readonly root: string }
  | { readonly kind: 'created'; readonly root: string; readonly file: string }
  | { readonly kind: 'appended'; readonly root: string; readonly file: string }
  | { readonly kind: 'unwritable'; readonly root: string; readonly file: string; readonly warning: string };

/** Options of {@link ensureGitIgnored}. */
export interface EnsureGitIgnoredOptions {
  /** Environment for the `git` processes (tests isolate them from the user's global config); `process.env` by default. */
  readonly env?: NodeJS.ProcessEnv;
  /** The git executable; `git` on PATH by default. */
  readonly git?: string;
}

interface GitRun {
  readonly code: number | 'spawn_failed';
  readonly stdout: string;
  readonly stderr: string;
}

function runGit(args: readonly string[], cwd: string, options: EnsureGitIgnoredOptions): Promise<GitRun> {
  return new Promise((resolve) => {
    execFile(
      options.git ?? 'git',
      [...args],
      { cwd, env: options.env ?? process.env },
      (error, stdout, stderr) => {
        if (error === null) return resolve({ code: 0, stdout, stderr });
        const code = typeof error.code === 'number' ? error.code : 'spawn_failed';
        resolve({ code, stdout, stderr: stderr || error.message });
      },
    );
  });
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw cause;
  }
}

async function addEntry(root: string): Promise<GitIgnoreOutcome> {
  const file = join(root, '.gitignore');
  try {
    const existing = await readIfExists(file);
    if (existing === undefined) {
      await writeFile(file, `# allium-loop run state\n${GITIGNORE_ENTRY}\n`, { flag: 'wx' });
      return { kind: 'created', root, file };
    }
    const separator = existing.length === 0 || existing.endsWith('\n') ? '' : '\n';
    await writeFile(file, `${separator}${GITIGNORE_ENTRY}\n`, { flag: 'a' });
    return { kind: 'appended', root, file };
  } catch (cause) {
    const reason = (cause as NodeJS.ErrnoException).code ?? String(cause);
    const warning = `Could not add ${GITIGNORE_ENTRY} to ${file} (${reason}); add it yourself to keep run state out of git. Continuing.`;
    return { kind: 'unwritable', root, file, warning };
  }
}

/**
 * Makes sure `.allium-loop/` under `projectDir` is ignored by git, as ARCHITECTURE.md §6 says: at the nearest
 * enclosing repository root (`git rev-parse --show-toplevel`), does nothing when `git check-ignore` already
 * ignores it (directly, via a parent pattern, via `core.excludesFile` or `.git/info/exclude`), otherwise creates
 * `.gitignore` or appends the entry. Outside a git repository it does nothing. When the file cannot be written it
 * returns `unwritable` with a warning for the caller to show once, and the run continues. Never throws for these.
 */
export async function ensureGitIgnored(
  projectDir: string,
  options: EnsureGitIgnoredOptions = {},
): Promise<GitIgnoreOutcome> {
  const top = await runGit(['rev-parse', '--show-toplevel'], projectDir, options);
  if (top.code !== 0) return { kind: 'not_a_repo', detail: top.stderr.trim() };
  const root = top.stdout.trim();
  const probe = join(relative(root, join(projectDir, GITIGNORE_ENTRY)), 'ledger.json').replaceAll('\\', '/');
  const check = await runGit(['check-ignore', '-q', '--no-index', probe], root, options);
  if (check.code === 0) return { kind: 'already_ignored', root };
  if (check.code !== 1) return { kind: 'check_failed', root, detail: check.stderr.trim() };
  return addEntry(root);
}

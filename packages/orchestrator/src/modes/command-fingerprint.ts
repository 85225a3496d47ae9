import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { isAbsolute, join, relative } from 'node:path';
import type { ModeStop } from './mode-context.js';
import type { ModeSession } from './mode-session.js';

/** What a verify command depends on, by label (`command`, `file:check.sh`, `npm script:test`), as sha256 hex. */
export type CommandFingerprint = Readonly<Record<string, string>>;

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

const RUNNERS = /^(?:npm|pnpm|yarn|bun)$/;

const INTERPRETERS = /^(?:sh|bash|zsh|dash|node|python[0-9.]*|ruby|perl|php|deno|bun|tsx)$/;

/** The scripts a command line executes: the program of each segment, or the script an interpreter is given. */
export function executedScripts(command: string): string[] {
  const scripts: string[] = [];
  for (const segment of command.split(/[;&|()\n]+/)) {
    const words = segment
      .trim()
      .split(/\s+/)
      .map((w) => w.replace(/^["']|["']$/g, ''))
      .filter((w) => w !== '' && !/^\w+=/.test(w));
    const [program, ...rest] = words;
    if (program === undefined) continue;
    if (!INTERPRETERS.test(program)) scripts.push(program);
    else {
      const script = rest.find((w) => !w.startsWith('-'));
      if (script !== undefined) scripts.push(script);
    }
  }
  return scripts;
}

/**
 * Fingerprints the user's verify command and what an agent could edit to make it pass without doing the work:
 * the command text, each project file it executes (`./check.sh`, `python score.py`), and the `package.json`
 * script an `npm test` / `pnpm run x` / `yarn x` runs. Files the command merely reads are left out: they may be
 * the very work the agent is asked to do. Never runs anything.
 */
export async function fingerprintCommand(command: string, cwd: string): Promise<CommandFingerprint> {
  const result: Record<string, string> = { command: sha(command) };
  for (const word of executedScripts(command)) {
    const path = isAbsolute(word) ? word : join(cwd, word);
    const rel = relative(cwd, path);
    if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) continue;
    const info = await stat(path).catch(() => undefined);
    if (info?.isFile() !== true) continue;
    result[`file:${rel}`] = sha(await readFile(path, 'utf8'));
  }
  const script = packageScriptName(command.split(/[\s;&|()<>"'`]+/).filter((w) => w !== ''));
  if (script !== undefined) {
    const scripts = await readPackageScripts(cwd);
    result[`npm script:${script}`] = sha(scripts?.[script] ?? '');
  }
  return result;
}

function packageScriptName(words: readonly string[]): string | undefined {
  const runner = words.findIndex((w) => RUNNERS.test(w));
  if (runner < 0) return undefined;
  const next = words[runner + 1];
  if (next === 'run' || next === 'run-script') return words[runner + 2];
  if (next === 'test' || next === 't') return 'test';
  return words[0] === 'yarn' || words[0] === 'pnpm' || words[0] === 'bun' ? next : undefined;
}

async function readPackageScripts(cwd: string): Promise<Record<string, string> | undefined> {
  try {
    const json = JSON.parse(await readFile(join(cwd, 'package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    return json.scripts;
  } catch {
    return undefined;
  }
}

/** Recorded labels whose fingerprint changed or that disappeared; scripts that appear later do not count. */
export function changedFingerprint(recorded: CommandFingerprint, now: CommandFingerprint): string[] {
  return Object.keys(recorded)
    .filter((label) => recorded[label] !== now[label])
    .sort();
}

/**
 * Stops the run when the verify command, or a file or package script it runs, changed since `recorded` was taken
 * (an agent making the check pass by editing the check); the violation is journaled. `undefined` when unchanged.
 */
export async function guardCommand(
  session: ModeSession,
  command: string,
  recorded: CommandFingerprint,
): Promise<ModeStop | undefined> {
  const changed = changedFingerprint(recorded, await fingerprintCommand(command, session.cwd));
  if (changed.length === 0) return undefined;
  const detail = `the verify command or what it runs changed since the run started (${changed.join(', ')})`;
  const at = new Date(session.now()).toISOString();
  await session.persist(session.ledger, [
    {
      type: 'violation',
      at,
      tick: session.ledger.tick,
      kind: 'verify_command_edited',
      detail,
      reverted: false,
    },
  ]);
  return { state: 'failed', reason: 'verify_command_edited', detail };
}

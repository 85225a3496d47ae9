import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CLAUDE_OFFLINE_ENV,
  CODEX_SCRIPTED_MODEL,
  GEMINI_SCRIPTED_MODEL,
  OPENCODE_OFFLINE_ENV,
  OPENCODE_SCRIPTED_MODEL,
  claudeEnvFor,
  codexEnvFor,
  geminiEnvFor,
  locateRealCli,
  opencodeEnvFor,
  type RealCli,
  type RealCliEnvOptions,
  type RealCliName,
  type ScriptedAction,
  type ScriptedCall,
  type ScriptedModelOptions,
  type ScriptedModelServer,
  startScriptedModel,
} from '@allium-loop/scripted-model';
import { afterAll, beforeAll } from 'vitest';
import { DEMO_DIR } from '../commands/demo.js';

/** The pinned CLIs, located once per test file; a CLI that cannot start carries its skip reason. */
export const REAL_CLIS: readonly RealCli[] = (['claude', 'codex'] as const).map((name) =>
  locateRealCli(name),
);

/** opencode, pinned too; it runs one call (its adapter's other paths are covered by its fake). */
export const REAL_OPENCODE: RealCli = locateRealCli('opencode');

/**
 * Prints the reason a real-CLI test is skipped, so a skip is never silent: vitest shows the test as skipped
 * and this line names why.
 */
export function announceSkips(): void {
  for (const cli of [...REAL_CLIS, REAL_OPENCODE])
    if ('skipReason' in cli) console.warn(`SKIPPED real ${cli.name} tests: ${cli.skipReason}`);
}

/** A located CLI's path (for `describe.skipIf` bodies that only run when it is present). */
export function cliPath(cli: RealCli): string {
  if (!('path' in cli)) throw new Error(`${cli.name} is not available: ${cli.skipReason}`);
  return cli.path;
}

/** The agent configuration (as in `allium-loop.yaml`) that runs `cli` against the scripted model. */
export function agentConfigFor(cli: RealCli, extra: Record<string, unknown> = {}): Record<string, unknown> {
  if (cli.name === 'gemini')
    return { kind: 'gemini', binary: cliPath(cli), model: GEMINI_SCRIPTED_MODEL, ...extra };
  if (cli.name === 'opencode')
    return {
      kind: 'opencode',
      binary: cliPath(cli),
      model: OPENCODE_SCRIPTED_MODEL,
      envAllow: Object.keys(OPENCODE_OFFLINE_ENV),
      ...extra,
    };
  return cli.name === 'claude'
    ? {
        kind: 'claude',
        binary: cliPath(cli),
        permissionMode: 'bypassPermissions',
        envAllow: Object.keys(CLAUDE_OFFLINE_ENV),
        ...extra,
      }
    : { kind: 'codex', binary: cliPath(cli), model: CODEX_SCRIPTED_MODEL, ...extra };
}

/**
 * The environment (PATH and TMPDIR plus the CLI's variables, with a scratch HOME) for running `cli` against `server`;
 * `options.retries` lets claude and codex retry failed model requests themselves (default: never).
 */
export async function envFor(
  name: RealCliName,
  server: ScriptedModelServer,
  options: RealCliEnvOptions = {},
): Promise<Record<string, string>> {
  const home = await mkdtemp(join(tmpdir(), `allium-real-${name}-home-`));
  const own =
    name === 'claude'
      ? await claudeEnvFor(server, home, options)
      : name === 'codex'
        ? await codexEnvFor(server, home, options)
        : name === 'gemini'
          ? await geminiEnvFor(server, home, options)
          : await opencodeEnvFor(server, home);
  // TMPDIR too, as the engine passes it (BASE_ENV_NAMES): without it a CLI writes its own files (gemini's error
  // reports) to /tmp, outside the run's temporary directory that the test teardown removes.
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', TMPDIR: tmpdir(), ...own };
}

/** Appends the agent config and caps to the project's `allium-loop.yaml` (JSON is valid YAML). */
export async function configureProject(
  dir: string,
  agent: Record<string, unknown>,
  caps: Record<string, number> = {},
): Promise<void> {
  const path = join(dir, 'allium-loop.yaml');
  const existing = await readFile(path, 'utf8').catch(() => '');
  const lines = existing
    .split('\n')
    .filter((line) => !/^(agent|caps):/.test(line))
    .join('\n');
  await writeFile(
    path,
    `${lines.trimEnd()}\nagent: ${JSON.stringify(agent)}\ncaps: ${JSON.stringify(caps)}\n`,
  );
}

interface ReplayStepJson {
  readonly phase: string;
  readonly description?: string;
  readonly write?: Record<string, string | { from: string }>;
  readonly result?: unknown;
}

/**
 * The demo's replay script (`examples/demo/replay/script.json`) as a scripted-model script: the Nth call of a
 * phase plays the Nth step of that phase, as with `replay`, but every file is written by the real CLI's own
 * tools. Implement calls also run the tests (`node --test`) before finishing, as the prompt asks; the
 * second implement round edits the file in place rather than rewriting it.
 */
export function demoScript(): ScriptedCall[] {
  const replayDir = join(DEMO_DIR, 'replay');
  const script = JSON.parse(readFileSync(join(replayDir, 'script.json'), 'utf8')) as {
    steps: ReplayStepJson[];
  };
  const written = new Map<string, string>();
  return script.steps.map((step) => {
    const actions: ScriptedAction[] = [];
    for (const [path, content] of Object.entries(step.write ?? {})) {
      const text =
        typeof content === 'string' ? content : readFileSync(join(replayDir, content.from), 'utf8');
      actions.push(editOrWrite(path, written.get(path), text));
      written.set(path, text);
    }
    if (step.phase === 'implement') actions.push({ kind: 'shell', command: 'node --test' });
    if (step.result !== undefined) actions.push({ kind: 'result', value: step.result });
    return {
      name: `${step.phase}: ${step.description ?? ''}`,
      match: `# Phase: ${step.phase} `,
      actions,
      finalText: step.description ?? 'done',
    };
  });
}

/** An edit of the one changed run of lines when the new text differs from the old in one place, else a write. */
function editOrWrite(path: string, before: string | undefined, after: string): ScriptedAction {
  if (before === undefined) return { kind: 'write', path, content: after };
  const a = before.split('\n');
  const b = after.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head += 1;
  let tail = 0;
  while (
    tail < a.length - head &&
    tail < b.length - head &&
    a[a.length - 1 - tail] === b[b.length - 1 - tail]
  )
    tail += 1;
  const oldLines = a.slice(head, a.length - tail);
  const newLines = b.slice(head, b.length - tail);
  // An edit needs a non-empty, unique old text.
  const oldText = `${oldLines.join('\n')}\n`;
  if (oldLines.length === 0 || before.split(oldText).length !== 2 || tail === 0)
    return { kind: 'write', path, content: after };
  return { kind: 'edit', path, oldText, newText: newLines.length === 0 ? '' : `${newLines.join('\n')}\n` };
}

/** The slug of the project's only run (the ledger file name under `.allium-loop/`). */
export async function onlySlug(dir: string): Promise<string> {
  const ledgers = (await readdir(join(dir, '.allium-loop'))).filter((f) => /^[^.]+\.json$/.test(f));
  if (ledgers.length !== 1)
    throw new Error(`expected one ledger in ${dir}, found ${ledgers.join(', ') || 'none'}`);
  return ledgers[0]!.slice(0, -'.json'.length);
}

/** Starts a scripted model for the enclosing `describe` (closed after it); call the result for the server. */
export function useScriptedModel(options: ScriptedModelOptions = {}): () => ScriptedModelServer {
  let server: ScriptedModelServer | undefined;
  beforeAll(async () => {
    server = await startScriptedModel(options);
  });
  afterAll(async () => {
    await server?.close();
  });
  return () => {
    if (server === undefined) throw new Error('the scripted model has not started');
    return server;
  };
}

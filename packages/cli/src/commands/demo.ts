import { execFile } from 'node:child_process';
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { startRun } from '@allium-loop/orchestrator';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { finish, guarded, progressPrinter } from './run.js';

const run = promisify(execFile);

/** The bundled demo: a project to copy and the replay script that plays the agent. */
export const DEMO_DIR = fileURLToPath(new URL('../../../../examples/demo/', import.meta.url));

/** The demo's goal. */
export const DEMO_GOAL = 'add loans, returns and overdue notices to the lending desk';

/** Copies the demo project into a new temporary git repository and returns its path. */
export async function prepareDemo(parent = tmpdir()): Promise<string> {
  const dir = await mkdtemp(join(parent, 'allium-loop-demo-'));
  await cp(join(DEMO_DIR, 'project'), dir, { recursive: true });
  const git = (...args: string[]) =>
    run(
      'git',
      [
        '-c',
        'user.name=allium-loop demo',
        '-c',
        'user.email=demo@localhost',
        '-c',
        'commit.gpgsign=false',
        ...args,
      ],
      { cwd: dir },
    );
  await git('init', '--quiet');
  await git('add', '-A');
  await git('commit', '--quiet', '-m', 'lending desk before the goal');
  return dir;
}

/** `allium-loop demo [--json] [--keep]`: the real loop on the bundled example, with the replay agent. */
export function demoCommand(): Command {
  return {
    name: 'demo',
    synopsis: 'demo [--json]',
    summary: 'Run the loop on the bundled example with the replay agent.',
    run: async (args, io: CliIo) => {
      let json = false;
      try {
        json =
          parseArgs({ args: [...args], options: { json: { type: 'boolean' } }, strict: true }).values.json ===
          true;
      } catch (error) {
        io.stderr(`allium-loop demo: ${(error as Error).message}\n`);
        return ExitCode.usage;
      }
      return guarded(io, async () => {
        const cwd = await prepareDemo();
        const say = (line: string) => {
          if (!json) io.stdout(`${line}\n`);
        };
        say(`Demo project copied to ${cwd} (a fresh git repository).`);
        say(`Goal: ${DEMO_GOAL}`);
        say('Agent: replay (examples/demo/replay/script.json) — real test runs, real checks, real ledger.\n');
        const outcome = await startRun(DEMO_GOAL, {
          cwd,
          agent: { kind: 'replay', script: join(DEMO_DIR, 'replay', 'script.json') },
          caps: { agentTimeoutMs: 60_000, testTimeoutMs: 60_000 },
          strictQuestions: false,
          interactive: false,
          env: io.env,
          signal: io.signal ?? new AbortController().signal,
          clock: { now: io.now ?? (() => Date.now()) },
          onProgress: progressPrinter(io, json),
          announce: say,
        });
        const code = finish(io, outcome, json);
        say(
          `\nThe ledger and journal are in ${join(cwd, '.allium-loop')}; try: cd ${cwd} && allium-loop report ${outcome.ledger.slug}`,
        );
        return code;
      });
    },
  };
}

import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { startRun } from '@allium-loop/orchestrator';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';
import { finish, guarded } from './run.js';
import { progressFor } from './run-options.js';

const run = promisify(execFile);

/**
 * The bundled demo: a project to copy and the replay script that plays the agent. In this repository it is
 * `examples/demo/` at the root; in the published package it sits beside `dist/`.
 */
export const DEMO_DIR = findDemoDir();

function findDemoDir(): string {
  const candidates = ['../examples/demo/', '../../../../examples/demo/'].map((relative) =>
    fileURLToPath(new URL(relative, import.meta.url)),
  );
  return candidates.find((dir) => existsSync(join(dir, 'project'))) ?? candidates[1]!;
}

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
    synopsis: 'demo [--json | --quiet]',
    summary: 'Run the loop on the bundled example with the replay agent.',
    run: async (args, io: CliIo) => {
      let values: { json?: boolean; quiet?: boolean };
      try {
        values = parseArgs({
          args: [...args],
          options: { json: { type: 'boolean' }, quiet: { type: 'boolean', short: 'q' } },
          strict: true,
        }).values;
      } catch (error) {
        io.stderr(`allium-loop demo: ${(error as Error).message}\n`);
        return ExitCode.usage;
      }
      const progress = progressFor(
        io,
        values.json === true ? 'json' : values.quiet === true ? 'quiet' : 'text',
      );
      return guarded(io, progress, async () => {
        const cwd = await prepareDemo();
        progress.announce(`Demo project copied to ${cwd} (a fresh git repository).`);
        progress.announce(`Goal: ${DEMO_GOAL}`);
        progress.announce(
          'Agent: replay (examples/demo/replay/script.json) — real test runs, real checks, real ledger.\n',
        );
        const outcome = await startRun(DEMO_GOAL, {
          cwd,
          agent: { kind: 'replay', script: join(DEMO_DIR, 'replay', 'script.json') },
          caps: { agentTimeoutMs: 60_000, testTimeoutMs: 60_000 },
          strictQuestions: false,
          interactive: false,
          env: io.env,
          signal: io.signal ?? new AbortController().signal,
          clock: { now: io.now ?? (() => Date.now()) },
          onProgress: progress.loop,
          onActivity: progress.activity,
          announce: progress.announce,
        });
        const code = finish(progress, outcome);
        if (values.json !== true)
          io.stdout(
            `\nThe ledger and journal are in ${join(cwd, '.allium-loop')}; try: cd ${cwd} && ${io.self?.() ?? 'allium-loop'} report ${outcome.ledger.slug}\n`,
          );
        return code;
      });
    },
  };
}

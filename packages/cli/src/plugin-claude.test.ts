import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  claudeEnvFor,
  locateRealCli,
  startScriptedModel,
  type ScriptedModelServer,
} from '@allium-loop/scripted-model';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_DIR, DEMO_GOAL, prepareDemo } from './commands/demo.js';
import { CLI_BIN } from './e2e/e2e.test-helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PLUGIN = join(ROOT, 'plugins', 'allium-loop');
const GOAL_SCRIPT = join(PLUGIN, 'scripts', 'goal.mjs');
const BIN = `${process.execPath} ${CLI_BIN}`;
const REPLAY = join(DEMO_DIR, 'replay', 'script.json');
const claude = locateRealCli('claude');
const COMMAND_TEXT = 'Drive this goal to convergence with the allium-loop engine';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Runs the real `claude` headless on the plugin command (namespaced, as `-p` needs it) with the plugin loaded. */
async function runClaude(cwd: string, env: Record<string, string>): Promise<{ code: number; out: string }> {
  if (!('path' in claude)) throw new Error(claude.skipReason);
  const args = [
    '-p',
    `/allium-loop:allium-loop ${DEMO_GOAL}`,
    '--plugin-dir',
    PLUGIN,
    '--permission-mode',
    'bypassPermissions',
  ];
  return new Promise((resolve) => {
    execFile(claude.path, args, { cwd, env, timeout: 600_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : Number(error.code), out: `${stdout}${stderr}` }),
    );
  });
}

const textOf = (body: unknown) => JSON.stringify(body);

describe.skipIf(!('path' in claude))(
  'the plugin in the real claude binary (scripted model)',
  { timeout: 600_000 },
  () => {
    it('finds /allium-loop, runs the CLI, and the Stop hook lets the session end once the engine says converged', async () => {
      const cwd = await prepareDemo();
      server = await startScriptedModel({
        script: [
          {
            name: '/allium-loop',
            match: COMMAND_TEXT,
            actions: [
              { kind: 'shell', command: `node ${GOAL_SCRIPT} start "${DEMO_GOAL}"` },
              { kind: 'shell', command: `${BIN} run "${DEMO_GOAL}" --agent-script ${REPLAY} --quiet` },
            ],
            finalText: 'The run converged.',
          },
        ],
      });
      const home = await mkdtemp(join(tmpdir(), 'allium-loop-claude-home-'));
      const env = {
        PATH: process.env['PATH'] ?? '',
        ...(await claudeEnvFor(server, home)),
        ALLIUM_LOOP_BIN: BIN,
      };
      const run = await runClaude(cwd, env);
      expect(run.code, run.out).toBe(0);
      // The command was found: its expanded text reached the model, and the model's turns played the script.
      const turns = server.requests.filter((request) => request.callIndex === 0);
      expect(textOf(turns[0]!.body)).toContain(DEMO_GOAL);
      expect(turns.map((request) => request.reply)).toEqual(['Bash', 'Bash', 'text']);
      // The CLI ran to convergence, and the Stop hook released the goal without holding the session.
      const ledger = JSON.parse(
        await readFile(
          join(cwd, '.allium-loop', 'add-loans-returns-and-overdue-notices-to-the.json'),
          'utf8',
        ),
      ) as { terminal: { state: string } };
      expect(ledger.terminal.state).toBe('converged');
      expect(existsSync(join(cwd, '.claude', 'allium-loop.local.json'))).toBe(false);
    });

    it('the Stop hook keeps the session going while the goal has no converged run', async () => {
      const cwd = await prepareDemo();
      server = await startScriptedModel({
        script: [
          {
            name: '/allium-loop without running',
            match: COMMAND_TEXT,
            actions: [{ kind: 'shell', command: `node ${GOAL_SCRIPT} start "${DEMO_GOAL}"` }],
            finalText: 'Done (claimed).',
          },
        ],
      });
      const home = await mkdtemp(join(tmpdir(), 'allium-loop-claude-home-'));
      const env = {
        PATH: process.env['PATH'] ?? '',
        ...(await claudeEnvFor(server, home)),
        ALLIUM_LOOP_BIN: BIN,
        ALLIUM_LOOP_MAX_BLOCKS: '2',
      };
      const run = await runClaude(cwd, env);
      expect(run.code, run.out).toBe(0);
      const turns = server.requests.filter((request) => request.callIndex === 0);
      // After the claimed "done", the hook's reason came back to the model, twice, before it let the session stop.
      const held = turns.filter((request) => textOf(request.body).includes('has no allium-loop run yet'));
      expect(held.length).toBeGreaterThanOrEqual(2);
      expect(turns.filter((request) => request.reply === 'text').length).toBe(3);
      expect(existsSync(join(cwd, '.claude', 'allium-loop.local.json'))).toBe(false);
    });
  },
);

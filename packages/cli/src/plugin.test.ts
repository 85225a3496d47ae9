import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { DEMO_DIR, DEMO_GOAL, prepareDemo } from './commands/demo.js';
import { CLI_BIN, runCli } from './e2e/e2e.test-helpers.js';

const exec = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const PLUGIN = join(ROOT, 'plugins', 'allium-loop');
const HOOK = join(PLUGIN, 'hooks', 'stop-gate.mjs');
const GOAL = join(PLUGIN, 'scripts', 'goal.mjs');
const BIN = `${process.execPath} ${CLI_BIN}`;
const SCRIPT = join(DEMO_DIR, 'replay', 'script.json');

/** Runs the Stop hook as Claude Code does: hook JSON on stdin, the decision on stdout. */
async function stopHook(
  cwd: string,
  env: Record<string, string> = {},
): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [HOOK],
      { env: { ...process.env, ALLIUM_LOOP_BIN: BIN, ...env } },
      (error, stdout) => resolve({ code: error === null ? 0 : Number(error.code), out: stdout }),
    );
    child.stdin!.end(JSON.stringify({ cwd, hook_event_name: 'Stop', stop_hook_active: false }));
  });
}

const startGoal = (cwd: string, goal: string) => exec(process.execPath, [GOAL, 'start', goal], { cwd });

describe('the Claude Code plugin', { timeout: 600_000 }, () => {
  it('has the layout Claude Code loads: manifest, marketplace entry, command, skill and Stop hook', async () => {
    const marketplace = JSON.parse(
      await readFile(join(ROOT, '.claude-plugin', 'marketplace.json'), 'utf8'),
    ) as {
      plugins: { name: string; source: string }[];
    };
    const entry = marketplace.plugins.find((plugin) => plugin.name === 'allium-loop');
    expect(entry).toBeDefined();
    const manifest = JSON.parse(
      await readFile(join(ROOT, entry!.source, '.claude-plugin', 'plugin.json'), 'utf8'),
    ) as { name: string; version: string };
    expect(manifest.name).toBe('allium-loop');
    const hooks = JSON.parse(await readFile(join(PLUGIN, 'hooks', 'hooks.json'), 'utf8')) as {
      hooks: { Stop: { hooks: { command: string }[] }[] };
    };
    const command = hooks.hooks.Stop[0]!.hooks[0]!.command;
    expect(command).toContain('${CLAUDE_PLUGIN_ROOT}/hooks/stop-gate.mjs');
    expect(existsSync(command.replace(/^node "\$\{CLAUDE_PLUGIN_ROOT\}\/(.*)"$/, `${PLUGIN}/$1`))).toBe(true);
    const slash = await readFile(join(PLUGIN, 'commands', 'allium-loop.md'), 'utf8');
    expect(slash).toMatch(/^---\ndescription: .+\n/);
    expect(slash).toContain('allium-loop run "$ARGUMENTS"');
    expect(slash).toContain('scripts/goal.mjs" start "$ARGUMENTS"');
    const skill = await readFile(join(PLUGIN, 'skills', 'using-allium-loop', 'SKILL.md'), 'utf8');
    expect(skill).toMatch(/^---\nname: using-allium-loop\ndescription: Use when .+\n---/);
  });

  it('lets a session without a recorded goal stop', async () => {
    const cwd = await prepareDemo();
    expect(await stopHook(cwd)).toEqual({ code: 0, out: '' });
  });

  it('keeps the session going until the engine says the goal converged, then lets it stop', async () => {
    const cwd = await prepareDemo();
    await startGoal(cwd, DEMO_GOAL);
    const before = await stopHook(cwd);
    expect(JSON.parse(before.out)).toMatchObject({
      decision: 'block',
      reason: expect.stringContaining('has no allium-loop run yet'),
    });

    const run = await runCli(['run', DEMO_GOAL, '--agent-script', SCRIPT, '--quiet'], cwd);
    expect(run.code).toBe(0);
    const after = await stopHook(cwd);
    expect(JSON.parse(after.out)).toEqual({
      systemMessage: expect.stringMatching(/converged \(engine verdict\)/),
    });
    expect(existsSync(join(cwd, '.claude', 'allium-loop.local.json'))).toBe(false);
    expect(await stopHook(cwd)).toEqual({ code: 0, out: '' });
  });

  it('blocks with the way forward while the run has failed, and gives up after the limit', async () => {
    const cwd = await prepareDemo();
    const goal = 'add loans';
    await startGoal(cwd, goal);
    const failed = await runCli(['run', goal, '--agent', 'codex', '--max-ticks', '1'], cwd, {
      PATH: `/usr/bin:/bin:${join(process.execPath, '..')}`,
    });
    expect(failed.code).toBe(1);
    const blocked = JSON.parse((await stopHook(cwd, { ALLIUM_LOOP_MAX_BLOCKS: '2' })).out) as {
      reason: string;
    };
    expect(blocked).toMatchObject({ decision: 'block' });
    expect(blocked.reason).toMatch(/ended failed, not converged.*allium-loop resume add-loans/);
    expect(JSON.parse((await stopHook(cwd, { ALLIUM_LOOP_MAX_BLOCKS: '2' })).out)).toMatchObject({
      decision: 'block',
    });
    expect(JSON.parse((await stopHook(cwd, { ALLIUM_LOOP_MAX_BLOCKS: '2' })).out)).toEqual({
      systemMessage: expect.stringContaining('after 2 reminders'),
    });
  });

  it('never traps a session when allium-loop cannot be run', async () => {
    const cwd = await prepareDemo();
    await startGoal(cwd, 'anything');
    const out = JSON.parse(
      (await stopHook(cwd, { ALLIUM_LOOP_BIN: '/nonexistent/allium-loop' })).out,
    ) as object;
    expect(out).toEqual({ systemMessage: expect.stringContaining('could not ask the engine') });
  });
});

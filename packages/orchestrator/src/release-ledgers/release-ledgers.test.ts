import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentRunner, AgentRunRequest, AgentRunResult } from '@allium-loop/agents';
import { describe, expect, it } from 'vitest';
import { resumeModeRun, type ModeRunSettings } from '../modes/run-mode.js';
import { resumeRun } from '../run-goal.js';

/**
 * Ledgers written by released versions of the CLI (see `test-fixtures/release-ledgers/generate.ts`), each killed
 * with SIGKILL in the middle of an agent call. Every one must still load, migrate and resume to the end.
 */
const FIXTURES = fileURLToPath(new URL('../../test-fixtures/release-ledgers/', import.meta.url));
const PLAN_AGENT = fileURLToPath(
  new URL('../../../cli/src/reliability/fixtures/plan-agent.mjs', import.meta.url),
);

async function listFiles(root: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(join(root, prefix), { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      return entry.isDirectory() ? listFiles(root, path) : Promise.resolve([path]);
    }),
  );
  return nested.flat();
}

/**
 * Copies a fixture into a fresh git repository: `dot-x` names become `.x`, `__PROJECT__` the new path, and the
 * stored agent (the plan agent) reads its plan from `<project>-plan.json`.
 */
async function restoreFixture(release: string, kind: string): Promise<string> {
  const source = join(FIXTURES, release, kind);
  const cwd = await mkdtemp(join(tmpdir(), `release-${kind}-`));
  const plan = `${cwd}-plan.json`;
  for (const file of await listFiles(source)) {
    const target = join(cwd, file.replace(/(^|\/)dot-/g, '$1.'));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(
      target,
      (await readFile(join(source, file), 'utf8'))
        .replaceAll('__PROJECT__', cwd)
        .replaceAll('__PLAN_AGENT__', PLAN_AGENT)
        .replaceAll('__PLAN__', plan),
    );
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'restored fixture');
  return cwd;
}

async function slugOf(cwd: string): Promise<string> {
  const names = await readdir(join(cwd, '.allium-loop'));
  return names.find((name) => name.endsWith('.json'))!.replace(/\.json$/, '');
}

/** An agent that applies `act` and reports success, recording each call's phase. */
function scriptedAgent(act: (request: AgentRunRequest) => Promise<void>): AgentRunner & { phases: string[] } {
  const phases: string[] = [];
  return {
    name: 'scripted',
    phases,
    async run(request): Promise<AgentRunResult> {
      phases.push(request.phase);
      await act(request);
      return { outcome: 'ok', exitCode: 0, signal: null, durationMs: 1, transcriptPath: '' };
    },
  };
}

function modeSettings(cwd: string, agent: AgentRunner): ModeRunSettings {
  return {
    cwd,
    agent: {},
    caps: {},
    env: { PATH: process.env['PATH'] },
    signal: new AbortController().signal,
    clock: { now: () => Date.now() },
    createAgent: () => agent,
  };
}

const RELEASES = ['0.1.0'];

describe.each(RELEASES)('ledgers written by release %s resume', (release) => {
  it('spec loop: the implement call killed mid-way is reconciled from its result file, and the run converges', async () => {
    const cwd = await restoreFixture(release, 'spec');
    const slug = await slugOf(cwd);
    const plan = `${cwd}-plan.json`;
    await writeFile(
      plan,
      JSON.stringify({
        weed: [{ result: { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' } }],
      }),
    );
    const outcome = await resumeRun(slug, {
      cwd,
      agent: { kind: 'command', argv: [process.execPath, PLAN_AGENT, plan, '{phase}', '{result_file}'] },
      caps: {},
      strictQuestions: false,
      interactive: false,
      env: { PATH: process.env['PATH'] },
      signal: new AbortController().signal,
      clock: { now: () => Date.now() },
    });
    expect(outcome.ledger.terminal?.state).toBe('converged');
    const calls = JSON.parse(await readFile(`${plan}.calls.json`, 'utf8')) as Record<string, number>;
    // Implement is not run again: its result file was valid.
    expect(calls).toEqual({ weed: 1 });
    expect(outcome.ledger.intents.every((intent) => intent.outcome !== null)).toBe(true);
  });

  it('--verify: the interrupted step runs again and the run converges', async () => {
    const cwd = await restoreFixture(release, 'verify');
    const agent = scriptedAgent(async (request) => writeFile(join(request.cwd, 'done.txt'), 'yes\n'));
    const outcome = await resumeModeRun(await slugOf(cwd), modeSettings(cwd, agent));
    expect(outcome.ledger.terminal?.state).toBe('converged');
    expect(agent.phases).toEqual(['step']);
    expect(outcome.ledger.intents.every((intent) => intent.outcome !== null)).toBe(true);
    expect(outcome.summary).toContain('exit 1 → 0');
  });

  it('--stories: the interrupted generator runs again, the evaluator passes the story', async () => {
    const cwd = await restoreFixture(release, 'stories');
    const agent = scriptedAgent(async (request) => {
      if (request.phase !== 'evaluate') return;
      await mkdir(dirname(request.resultFile), { recursive: true });
      await writeFile(request.resultFile, JSON.stringify({ verdict: 'PASS' }));
    });
    const outcome = await resumeModeRun(await slugOf(cwd), modeSettings(cwd, agent));
    expect(outcome.ledger.terminal?.state).toBe('converged');
    expect(agent.phases).toEqual(['generate', 'evaluate']);
    const prd = JSON.parse(await readFile(join(cwd, 'prd.json'), 'utf8')) as {
      userStories: { passes: boolean }[];
    };
    expect(prd.userStories[0]?.passes).toBe(true);
  });

  it('--state-file: the interrupted step runs again and a verified done claim converges', async () => {
    const cwd = await restoreFixture(release, 'state-file');
    const agent = scriptedAgent(async (request) => {
      await writeFile(join(request.cwd, 'colours.md'), '- red\n- yellow\n- blue\n');
      const state = JSON.parse(await readFile(join(request.cwd, '.al-state.json'), 'utf8')) as Record<
        string,
        unknown
      >;
      await writeFile(
        join(request.cwd, '.al-state.json'),
        JSON.stringify({ ...state, status: 'done', result: 'Wrote 3 items to colours.md' }),
      );
    });
    const outcome = await resumeModeRun(await slugOf(cwd), modeSettings(cwd, agent));
    expect(outcome.ledger.terminal?.state).toBe('converged');
    expect(agent.phases).toEqual(['step']);
    expect((await stat(join(cwd, 'colours.md'))).isFile()).toBe(true);
  });
});

import { execFile } from 'node:child_process';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  makeProject,
  readLedger,
  runCli,
  startCli,
  weedStep,
  writeScript,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';
import { waitFor } from './reliability.test-helpers.js';

const exec = promisify(execFile);

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

async function listRows(dir: string): Promise<LooseJson[]> {
  const list = await runCli(['list', '--json'], dir);
  return list.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LooseJson);
}

/** Kills (by pid) the replay agent processes that play `script`: the agent a SIGKILLed engine left behind. */
async function killAgentsOf(script: string): Promise<void> {
  const { stdout } = await exec('ps', ['-eo', 'pid=,args=']);
  for (const line of stdout.split('\n')) {
    const [pid, ...args] = line.trim().split(/\s+/);
    if (pid !== undefined && args.join(' ').includes(script) && args.join(' ').includes('replay-agent'))
      process.kill(Number(pid), 'SIGKILL');
  }
}

describe('a wrong agent setting never leaves a run behind', { timeout: 120_000 }, () => {
  it('refuses --agent gpt4, a stray --agent-command and a bad placeholder before anything is recorded', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const ledger = join(dir, '.allium-loop', `${DRIFT_SLUG}.json`);

    const unknown = await runCli(['run', DRIFT_GOAL, '--agent', 'gpt4'], dir);
    // A usage error (exit 2, docs/cli.md), refused before anything is recorded.
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('agent setting is wrong');
    expect(unknown.stderr).toContain('gpt4');
    expect(await exists(ledger)).toBe(false);

    const stray = await runCli(
      ['run', DRIFT_GOAL, '--agent', 'claude', '--agent-command', 'echo {prompt_file}'],
      dir,
    );
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('--agent-command is for --agent command');
    expect(await exists(ledger)).toBe(false);

    const placeholder = await runCli(
      ['run', DRIFT_GOAL, '--agent', 'command', '--agent-command', 'node agent.mjs {prompt} {result_file}'],
      dir,
    );
    expect(placeholder.code).toBe(2);
    expect(placeholder.stderr).toContain('unknown placeholder {prompt}');
    expect(await exists(ledger)).toBe(false);
    expect(await listRows(dir)).toEqual([]);
  });
});

describe('runs never get stuck', { timeout: 420_000 }, () => {
  it('list tells live from dead runs, a second goal is refused, resume takes corrected flags, answer refuses an ended run', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const hanging = await writeScript(dir, [weedStep(false, { delayMs: 600_000 })]);
    const { child, done } = startCli(
      ['run', DRIFT_GOAL, '--agent', 'replay', '--agent-script', hanging],
      dir,
    );
    const replayState = join(dir, '.allium-loop', DRIFT_SLUG, 'replay-state.json');
    await waitFor(() => exists(replayState), 300_000);

    // While its supervisor lives, the run is running; another goal in the same tree is refused.
    const live = await listRows(dir);
    expect(live).toMatchObject([{ slug: DRIFT_SLUG, status: 'running', holder: { pid: child.pid } }]);
    const other = await runCli(
      ['run', 'add a reopen rule', '--agent', 'replay', '--agent-script', hanging],
      dir,
    );
    expect(other.code).toBe(1);
    expect(other.stderr).toContain(`Another goal is already running in ${dir}: ${DRIFT_SLUG}`);
    expect(await exists(join(dir, '.allium-loop', 'add-a-reopen-rule.json'))).toBe(false);

    // kill -9: the ledger still says running, but nobody drives it.
    child.kill('SIGKILL');
    await done;
    await killAgentsOf(hanging);
    expect(await listRows(dir)).toMatchObject([{ slug: DRIFT_SLUG, status: 'interrupted' }]);
    const status = await runCli(['status', DRIFT_SLUG], dir);
    expect(status.stdout).toContain(`${DRIFT_SLUG}  interrupted`);
    expect(status.stdout).toContain(`allium-loop resume ${DRIFT_SLUG}`);

    // A wrong agent on resume is refused before the run is touched.
    const before = await readFile(join(dir, '.allium-loop', `${DRIFT_SLUG}.json`), 'utf8');
    const wrong = await runCli(['resume', DRIFT_SLUG, '--agent', 'gpt4'], dir);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('agent setting is wrong');
    expect(await readFile(join(dir, '.allium-loop', `${DRIFT_SLUG}.json`), 'utf8')).toBe(before);
    expect(await listRows(dir)).toMatchObject([{ slug: DRIFT_SLUG, status: 'interrupted' }]);

    // Corrected flags apply: a working agent script, new timeouts and caps, recorded for later resumes.
    const fixed = await writeScript(join(dir, 'fixed'), [weedStep(false)]);
    const resumed = await runCli(
      [
        'resume',
        DRIFT_SLUG,
        '--agent-script',
        fixed,
        '--agent-timeout',
        '120',
        '--test-timeout',
        '90',
        '--max-ticks',
        '4',
      ],
      dir,
    );
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
    const ledger = await readLedger(dir, DRIFT_SLUG);
    expect(ledger['terminal'].state).toBe('converged');
    expect(ledger['caps']).toMatchObject({ agentTimeoutMs: 120_000, testTimeoutMs: 90_000, maxTicks: 4 });
    expect(ledger['modeState'].config.agent).toMatchObject({ kind: 'replay', script: fixed });

    // An answer to a run that ended for good could never be applied: refused, nothing recorded.
    const path = join(dir, '.allium-loop', `${DRIFT_SLUG}.json`);
    ledger['questions'] = [
      {
        id: 'q-1',
        text: 'May a closed tally be reopened?',
        classification: 'parked',
        assumption: 'no',
        answer: null,
        status: 'open',
        raisedAtTick: 1,
        phase: 'weed',
      },
    ];
    await writeFile(path, JSON.stringify(ledger));
    const answer = await runCli(['answer', DRIFT_SLUG, 'q-1', 'yes'], dir);
    expect(answer.code).toBe(1);
    expect(answer.stderr).toContain('ended converged');
    expect(answer.stderr).toContain('cannot be applied');
    expect((await readLedger(dir, DRIFT_SLUG))['questions'][0].status).toBe('open');
  });
});

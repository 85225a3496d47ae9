import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  makeProject,
  readJournal,
  readLedger,
  runCli,
  startCli,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';
import { killAndResume, listFiles, recordFigure, seeded, writePlan } from './reliability.test-helpers.js';

const STEP_AGENT = fileURLToPath(new URL('./fixtures/step-agent.mjs', import.meta.url));
const GOAL = 'take four steps';
const SLUG = 'take-four-steps';
const KILLS = Number(process.env['RELIABILITY_VERIFY_KILLS'] ?? 6);
const SEED = Number(process.env['RELIABILITY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
/** The longest wait after a process's first new journal line before it is killed. */
const MAX_DELAY_MS = 3000;

type Kind = 'plain' | 'climb';

/** A `--verify` run (plain: `steps.txt` ≥ 4 passes; climb: the score is the step count, target 4). */
function verifyArgs(kind: Kind, log: string, need = 4, interval = 0): string[] {
  // The plain check prints the step count, so each tick's output differs until it passes (no no_progress).
  const mode =
    kind === 'plain'
      ? [
          '--verify',
          `cat steps.txt 2>/dev/null; test "$(cat steps.txt 2>/dev/null || echo 0)" -ge ${String(need)}`,
        ]
      : [
          '--verify',
          'echo "score: $(cat steps.txt 2>/dev/null || echo 0)"',
          '--hillclimb',
          '--score',
          'score: (\\d+)',
          '--target',
          '4',
        ];
  return [
    'run',
    GOAL,
    ...mode,
    '--max-ticks',
    '12',
    '--interval',
    String(interval),
    '--agent',
    'command',
    '--agent-command',
    `${process.execPath} ${STEP_AGENT} ${log} 4`,
  ];
}

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8' }).trim();
}

/** What a finished run leaves: its terminal state, the tree's files and steps.txt, and (climbing) the best. */
async function finalState(dir: string, kind: Kind) {
  const ledger = await readLedger(dir, SLUG);
  const verify = ledger['modeState']['verify'] as LooseJson;
  return {
    terminal: { state: ledger['terminal'].state, reason: ledger['terminal'].reason },
    files: (await listFiles(dir))
      .filter((f) => !f.startsWith('.allium-loop') && !f.startsWith('.git/'))
      .sort(),
    steps: await readFile(join(dir, 'steps.txt'), 'utf8'),
    lastTick: { exitCode: verify['ticks'].at(-1).exitCode, score: verify['ticks'].at(-1).score },
    ...(kind === 'climb'
      ? {
          best: verify['best'].score,
          bestTree: git(dir, 'show', `refs/allium-loop/${SLUG}/best:steps.txt`),
        }
      : {}),
  };
}

/** The journal's terminal events and `/loop` names: a run that converged did so exactly once. */
async function endings(dir: string): Promise<string[]> {
  return (await readJournal(dir, SLUG))
    .filter((e) => e['type'] === 'terminal' || e['type'] === 'x-verify.exit')
    .map((e) => (e['type'] === 'terminal' ? String(e['state']) : String(e['data'].status)));
}

/** Resolves once the child's stdout has shown `text` (an event, not a time). */
async function untilOutput(child: ChildProcess, text: string): Promise<void> {
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(text)) resolve();
    });
    child.on('close', () => reject(new Error(`the run ended without printing "${text}":\n${seen}`)));
  });
}

async function calls(log: string): Promise<number> {
  return (await readFile(log, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '').length;
}

describe('verify mode survives kill -9 and a cut context (issue 22 items 2-3)', { timeout: 900_000 }, () => {
  it.each(['plain', 'climb'] as const)(
    `${String(KILLS)} kills -9 at random moments of a %s verify run, each resumed in a fresh process: the same final state as a run never killed`,
    async (kind) => {
      console.log(
        `verify kill test (${kind}): seed ${String(SEED)} (RELIABILITY_SEED=${String(SEED)} replays)`,
      );
      const reference = await makeProject({ 'README.md': 'steps\n' });
      const clean = await runCli(verifyArgs(kind, `${reference}-calls.log`), reference);
      expect(clean.code, `${clean.stdout}${clean.stderr}`).toBe(0);
      const expected = await finalState(reference, kind);
      expect(expected.steps).toBe('4\n');

      const random = seeded(SEED + (kind === 'plain' ? 0 : 1));
      const dir = await makeProject({ 'README.md': 'steps\n' });
      const log = `${dir}-calls.log`;
      const { run, kills } = await killAndResume(
        dir,
        SLUG,
        verifyArgs(kind, log),
        KILLS,
        random,
        MAX_DELAY_MS,
      );
      // A run that ended before the last kill came is done; resuming it again says so and changes nothing.
      expect(run.code, `${dir}\n${run.stdout}${run.stderr}`).toBe(0);
      expect(await finalState(dir, kind)).toEqual(expected);
      expect(await endings(dir)).toEqual(['CONVERGED', 'converged']);
      const violations = (await readJournal(dir, SLUG)).filter((e) => e['type'] === 'violation');
      expect(violations).toEqual([]);
      await recordFigure(
        `verify-kills-${kind}`,
        `${String(kills)} kills -9 at random moments of a ${kind} verify run (seed ${String(SEED)}), each resumed in a fresh process: the same terminal state, tree and ${kind === 'climb' ? 'best checkpoint' : 'last measurement'} as a run never killed; converged exactly once; ${String(await calls(log))} agent calls`,
        { kills, seed: SEED },
      );
    },
  );

  it('killed after the end is journaled but before the ledger is saved: resume keeps that end and does not converge again', async () => {
    // The journal is written before the ledger (RunRecord.persist), so a kill -9 between the two leaves a ledger
    // still running whose journal already holds the run's end. Rebuilt here from a finished run: the same files as
    // at that instant, whatever the machine's speed (a random kill found it once in CI).
    const dir = await makeProject({ 'README.md': 'steps\n' });
    const log = `${dir}-calls.log`;
    const clean = await runCli(verifyArgs('climb', log), dir);
    expect(clean.code, `${clean.stdout}${clean.stderr}`).toBe(0);
    const finished = await readLedger(dir, SLUG);
    const file = join(dir, '.allium-loop', `${SLUG}.json`);
    await writeFile(file, `${JSON.stringify({ ...finished, status: 'running', terminal: null }, null, 2)}\n`);
    const agentCalls = await calls(log);

    const resumed = await runCli(['resume', SLUG], dir);
    expect(resumed.code, `${resumed.stdout}${resumed.stderr}`).toBe(0);
    expect(resumed.stdout).toContain('already ended: converged');
    expect(await calls(log)).toBe(agentCalls);
    expect(await endings(dir)).toEqual(['CONVERGED', 'converged']);
    const ledger = await readLedger(dir, SLUG);
    expect([ledger['status'], ledger['terminal'].state]).toEqual(['terminal', 'converged']);
    expect(ledger['terminal'].at).toBe(finished['terminal'].at);
  });

  it('forced compaction: killed during the wait before the converging tick, a fresh process converges exactly once, repeating nothing', async () => {
    const dir = await makeProject({ 'README.md': 'steps\n' });
    const log = `${dir}-calls.log`;
    // Two steps converge; an hour between ticks, so the kill lands in the wait after tick 1, before the converging
    // tick, whatever the machine's speed.
    const started = startCli(verifyArgs('plain', log, 2, 3600), dir);
    await untilOutput(started.child, 'waiting 3600 s before tick 2');
    started.child.kill('SIGKILL');
    expect((await started.done).signal).toBe('SIGKILL');
    expect(await calls(log)).toBe(1);
    const resumed = await runCli(['resume', SLUG], dir);
    expect(resumed.code, `${resumed.stdout}${resumed.stderr}`).toBe(0);
    // No wait before the resumed run's first tick, one agent call, one measurement, one ending.
    expect(resumed.stdout).not.toContain('waiting');
    expect(await calls(log)).toBe(2);
    const ledger = await readLedger(dir, SLUG);
    expect(ledger['verdicts'].map((v: LooseJson) => [v.tick, v.converged])).toEqual([
      [1, false],
      [2, true],
    ]);
    const journal = await readJournal(dir, SLUG);
    expect(journal.filter((e) => e['type'] === 'x-verify.baseline')).toHaveLength(1);
    expect(journal.filter((e) => e['type'] === 'x-verify.tick').map((e) => e['data'].tick)).toEqual([1, 2]);
    expect(await endings(dir)).toEqual(['CONVERGED', 'converged']);
    expect(await readFile(join(dir, 'steps.txt'), 'utf8')).toBe('2\n');
    await recordFigure(
      'verify-forced-compaction',
      'kill -9 in the wait before the converging tick, resume in a fresh process: converged exactly once at tick 2, 2 agent calls, nothing measured twice',
    );
  });

  it("kill -9 inside a plain verify tick (the agent's edit half done), resume in a fresh process: the half-done edit is rolled back, then the run converges exactly once", async () => {
    const dir = await makeProject({ 'README.md': 'steps\n', 'steps.txt': '0\n' });
    // Tick 1's agent gets half way (one file rewritten, one created, the counter bumped) and the supervisor dies
    // under it, at that moment: the agent itself sends the SIGKILL, so no timing decides where the kill lands.
    const plan = await writePlan(dir, {
      step: [
        {
          write: {
            'steps.txt': '1\n',
            'README.md': 'steps, half rewritten\n',
            'notes/half-done.txt': 'half done\n',
          },
          killParent: true,
        },
        { write: { 'steps.txt': '1\n' } },
      ],
    });
    const args = [
      'run',
      GOAL,
      '--verify',
      'cat steps.txt; test "$(cat steps.txt)" -ge 1',
      '--max-ticks',
      '5',
      '--interval',
      '0',
      '--agent',
      'command',
      '--agent-command',
      plan.command,
    ];
    const killed = await runCli(args, dir);
    expect(killed.signal, `${killed.stdout}${killed.stderr}`).toBe('SIGKILL');
    expect(await readFile(join(dir, 'notes/half-done.txt'), 'utf8')).toBe('half done\n');
    const open = (await readLedger(dir, SLUG))['modeState']['verify']['pending'] as LooseJson;
    expect(open).toMatchObject({ tick: 1 });
    expect(open['best']).toBeUndefined();

    const resumed = await runCli(['resume', SLUG], dir);
    expect(resumed.code, `${resumed.stdout}${resumed.stderr}`).toBe(0);
    expect(resumed.stdout).toMatch(/tick 1 was interrupted before it was measured: rolled back 3 file\(s\)/);
    // The half-done edit is gone: the created file (and its folder) removed, the rewritten ones back.
    expect(existsSync(join(dir, 'notes'))).toBe(false);
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toBe('steps\n');
    // ... and kept off every branch, under the run's ref.
    expect(git(dir, 'show', `refs/allium-loop/${SLUG}/reverted-1:notes/half-done.txt`)).toBe('half done');
    expect(git(dir, 'for-each-ref', '--format=%(refname)', `refs/allium-loop/${SLUG}/pending`)).toBe('');
    const journal = await readJournal(dir, SLUG);
    const rolled = journal.filter((e) => e['type'] === 'x-verify.rolled_back');
    expect(rolled.map((e) => [e['data'].tick, e['data'].why, [...e['data'].paths].sort()])).toEqual([
      [1, 'interrupted', ['README.md', 'notes/half-done.txt', 'steps.txt']],
    ]);
    // Converged exactly once, by tick 2's own step, measured once; the interrupted tick 1 was never recorded.
    expect(await plan.calls()).toEqual({ step: 2 });
    const ledger = await readLedger(dir, SLUG);
    expect(ledger['verdicts'].map((v: LooseJson) => [v.tick, v.converged])).toEqual([[2, true]]);
    expect(ledger['modeState']['verify']['pending']).toBeNull();
    expect(journal.filter((e) => e['type'] === 'x-verify.tick').map((e) => e['data'].tick)).toEqual([2]);
    expect(await endings(dir)).toEqual(['CONVERGED', 'converged']);
    expect(await readFile(join(dir, 'steps.txt'), 'utf8')).toBe('1\n');
    expect(git(dir, 'diff', '--name-only')).toBe('steps.txt');
    await recordFigure(
      'verify-plain-rollback',
      'kill -9 inside a plain verify tick (3 files half edited), resume in a fresh process: the 3 paths rolled back (kept under reverted-1), converged exactly once at tick 2, 2 agent calls',
    );
  });

  it('Ctrl-C during the wait between ticks ends the run at once, cancelled, with no further tick', async () => {
    const dir = await makeProject({ 'README.md': 'steps\n' });
    const { child, done } = startCli(verifyArgs('plain', `${dir}-calls.log`, 4, 3600), dir);
    await untilOutput(child, 'waiting 3600 s before tick 2');
    child.kill('SIGINT');
    const cancelled = await done;
    expect(cancelled.code, `${cancelled.stdout}${cancelled.stderr}`).toBe(130);
    expect(cancelled.stdout).toContain('waiting 3600 s before tick 2');
    expect((await readLedger(dir, SLUG))['tick']).toBe(1);
  });
});

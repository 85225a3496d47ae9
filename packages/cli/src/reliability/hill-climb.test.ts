import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeProject, readJournal, readLedger, runCli, startCli } from '../e2e/e2e.test-helpers.js';
import { killAndResume, recordFigure, seeded, writePlan } from './reliability.test-helpers.js';

const GOAL = 'raise the score';
const SLUG = 'raise-the-score';
const BEST = `refs/allium-loop/${SLUG}/best`;
const KILLS = Number(process.env['RELIABILITY_CLIMB_KILLS'] ?? 12);
const SEED = Number(process.env['RELIABILITY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
/** The longest wait after a process's first journal line before it is killed. */
const MAX_DELAY_MS = 4000;

/** A hill-climb run of `--max-ticks` ticks whose score is the number in score.txt, and the `command` agent. */
function climbArgs(agentCommand: string, ticks: number, verify = 'echo "score: $(cat score.txt)"'): string[] {
  return [
    'run',
    GOAL,
    '--verify',
    verify,
    '--hillclimb',
    '--score',
    'score: (\\d+)',
    '--max-ticks',
    String(ticks),
    '--interval',
    '0',
    '--agent',
    'command',
    '--agent-command',
    agentCommand,
  ];
}

function git(dir: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=user', '-c', 'user.email=user@localhost', ...args], {
    cwd: dir,
    encoding: 'utf8',
  }).trim();
}

/** The files a commit holds. */
function filesOf(dir: string, commit: string): string[] {
  return git(dir, 'ls-tree', '-r', '--name-only', commit).split('\n');
}

describe('hill-climb: reverts, interrupted ticks and refs (issue 14 items 13-15)', () => {
  it(
    'kill -9 inside a tick (during the agent step), a commit made meanwhile, then resume: the unscored edits are rolled back, never in the best checkpoint, and the branch is reset to the recorded revision with the new commit kept under a ref',
    { timeout: 300_000 },
    async () => {
      const dir = await makeProject({ 'score.txt': '10\n' });
      const plan = await writePlan(dir, {
        step: [
          { write: { 'score.txt': '5\n', 'half-done.txt': 'unscored\n' }, killParent: true },
          { write: { 'score.txt': '20\n' } },
        ],
      });
      const killed = await runCli(climbArgs(plan.command, 2), dir);
      expect(killed.signal, `${killed.stdout}${killed.stderr}`).toBe('SIGKILL');
      expect(await readFile(join(dir, 'half-done.txt'), 'utf8')).toBe('unscored\n');
      const recorded = git(dir, 'rev-parse', 'HEAD');
      git(dir, 'commit', '--quiet', '--allow-empty', '-m', 'a commit the user made after the crash');
      const userCommit = git(dir, 'rev-parse', 'HEAD');
      const resumed = await runCli(['resume', SLUG], dir);
      expect(resumed.code, `${resumed.stdout}${resumed.stderr}`).toBe(3);
      const kept = `refs/allium-loop/${SLUG}/moved-${userCommit.slice(0, 12)}`;
      expect(resumed.stdout).toContain(
        `HEAD moved since the run last recorded it: ${recorded.slice(0, 12)} → ${userCommit.slice(0, 12)}. The branch is back at ${recorded.slice(0, 12)}`,
      );
      expect(resumed.stdout).toContain(`is kept as ${kept}`);
      expect(resumed.stdout).toMatch(/tick 1 was interrupted before it was scored: rolled back 2 file\(s\)/);
      expect(existsSync(join(dir, 'half-done.txt'))).toBe(false);
      expect(await readFile(join(dir, 'score.txt'), 'utf8')).toBe('20\n');
      const best = git(dir, 'rev-parse', BEST);
      expect(filesOf(dir, best)).not.toContain('half-done.txt');
      expect(git(dir, 'show', `${best}:score.txt`)).toBe('20');
      for (const checkpoint of (await readLedger(dir, SLUG))['checkpoints'] as { object: string }[])
        expect(filesOf(dir, checkpoint.object)).not.toContain('half-done.txt');
      // The interrupted tick's edits are not lost: they are kept off every branch.
      expect(git(dir, 'show', `refs/allium-loop/${SLUG}/reverted-1:half-done.txt`)).toBe('unscored');
      // /loop's restart rule: the branch is back at the recorded revision; the user's commit is kept, not lost.
      expect(git(dir, 'rev-parse', 'HEAD')).toBe(recorded);
      expect(git(dir, 'rev-parse', kept)).toBe(userCommit);
      expect(git(dir, 'log', '-1', '--format=%s', kept)).toBe('a commit the user made after the crash');
      expect(git(dir, 'rev-parse', `${best}^`)).toBe(recorded);
      const journal = await readJournal(dir, SLUG);
      expect(journal.find((e) => e['type'] === 'x-verify.head_reset')?.['data']).toMatchObject({
        recorded,
        now: userCommit,
        kept,
      });
      expect(await plan.calls()).toEqual({ step: 2 });
      await recordFigure(
        'hill-climb-kill',
        'kill -9 during the agent step of tick 1, a new commit, resume: 2 unscored files rolled back, none in any checkpoint, the branch reset to the recorded revision with the new commit kept under a ref, the best holds only the scored tick',
      );
    },
  );

  it(
    "a reverted tick touches only the agent's paths: the engine's own output redirected into the repository and a log the verify command appends to stay whole",
    { timeout: 300_000 },
    async () => {
      const dir = await makeProject({ 'score.txt': '10\n' });
      const plan = await writePlan(dir, {
        step: [{ write: { 'score.txt': '20\n' } }, { write: { 'score.txt': '5\n', 'junk.txt': 'junk\n' } }],
      });
      const log = await open(join(dir, 'run.log'), 'a');
      const run = startCli(
        climbArgs(plan.command, 2, 'echo "score: $(cat score.txt)" | tee -a bench.log'),
        dir,
        {},
        log.fd,
      );
      const done = await run.done;
      await log.close();
      const output = await readFile(join(dir, 'run.log'), 'utf8');
      expect(done.code, output).toBe(3);
      expect(output).toMatch(/tick 2 · verify exit 0 · score 5 \(best 20\) · reverted/);
      expect(output).toContain('best score 20 at tick 1');
      expect(await readFile(join(dir, 'bench.log'), 'utf8')).toBe('score: 10\nscore: 20\nscore: 5\n');
      expect(existsSync(join(dir, 'junk.txt'))).toBe(false);
      expect(await readFile(join(dir, 'score.txt'), 'utf8')).toBe('20\n');
      const reverted = (await readJournal(dir, SLUG)).find((e) => e['type'] === 'x-verify.reverted');
      expect((reverted?.['data'] as { paths: string[] }).paths.sort()).toEqual(['junk.txt', 'score.txt']);
      await recordFigure(
        'hill-climb-revert-scope',
        "a reverted tick restored 2 paths (the agent's); the engine's redirected output and the verify command's log kept every line",
      );
    },
  );

  it(
    'an agent that moves refs/allium-loop/<slug>/best to a forged commit: a violation, journaled and shown, and the ref put back on the commit the report names',
    { timeout: 300_000 },
    async () => {
      const dir = await makeProject({ 'score.txt': '10\n' });
      const forged = git(dir, 'rev-parse', 'HEAD');
      const plan = await writePlan(dir, {
        step: [
          { write: { 'score.txt': '20\n' } },
          { write: { 'score.txt': '5\n', [`.git/${BEST}`]: `${forged}\n` } },
        ],
      });
      const run = await runCli(climbArgs(plan.command, 2), dir);
      expect(run.code, `${run.stdout}${run.stderr}`).toBe(3);
      const state = (await readLedger(dir, SLUG))['modeState']['verify'] as {
        best: { commit: string; tick: number };
      };
      expect(state.best.tick).toBe(1);
      expect(git(dir, 'rev-parse', BEST)).toBe(state.best.commit);
      expect(run.stdout).toContain(`best score 20 at tick 1 (${state.best.commit.slice(0, 12)})`);
      expect(run.stdout).toMatch(/violation \(checkpoint_ref_moved, reverted\)/);
      const violations = (await readJournal(dir, SLUG)).filter((e) => e['type'] === 'violation');
      expect(violations).toHaveLength(1);
      expect(violations[0]).toMatchObject({ kind: 'checkpoint_ref_moved', path: BEST, reverted: true });
      await recordFigure(
        'hill-climb-best-ref',
        `best ref forged to ${forged.slice(0, 12)} by the agent: 1 violation journaled and shown, the ref back on the ledger's best (tick 1)`,
      );
    },
  );

  it(
    `${String(KILLS)} kills -9 at random moments of a hill-climb run, each followed by resume: every checkpoint holds what its tick scored, the tree and best agree with the ledger`,
    { timeout: 900_000 },
    async () => {
      console.log(
        `hill-climb kill test: seed ${String(SEED)} (RELIABILITY_SEED=${String(SEED)} replays the delays)`,
      );
      const random = seeded(SEED);
      const dir = await makeProject({ 'score.txt': '10\n' });
      // Scores alternate up and down, so kills land in kept and in reverted ticks; each call leaves a trail file.
      const scores = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 20 + i * 10 : 5 + i));
      const plan = await writePlan(dir, {
        step: scores.map((score, i) => ({
          write: { 'score.txt': `${String(score)}\n`, 'trail.txt': `call ${String(i + 1)}\n` },
        })),
      });
      const ticks = 8;
      const { run, kills, resumes } = await killAndResume(
        dir,
        SLUG,
        climbArgs(plan.command, ticks),
        KILLS,
        random,
        MAX_DELAY_MS,
      );
      expect(run.code, `${dir}\n${run.stdout}${run.stderr}`).toBe(3);
      const ledger = await readLedger(dir, SLUG);
      const state = ledger['modeState']['verify'] as {
        baseline: { score: number };
        best: { score: number; tick: number; commit: string };
        ticks: { tick: number; score: number | null; kept: boolean }[];
        pending?: unknown;
      };
      expect(ledger['tick']).toBe(ticks);
      expect(state.pending ?? null).toBeNull();
      const checkpoints = ledger['checkpoints'] as { tick: number; ref: string; object: string }[];
      // Every kept tick's checkpoint holds the score that tick measured, and the ref names the recorded commit.
      for (const record of state.ticks.filter((t) => t.kept)) {
        const checkpoint = checkpoints.find((c) => c.tick === record.tick);
        expect(checkpoint, `tick ${String(record.tick)} kept without a checkpoint`).toBeDefined();
        expect(git(dir, 'show', `${checkpoint!.object}:score.txt`)).toBe(String(record.score));
        expect(git(dir, 'rev-parse', checkpoint!.ref)).toBe(checkpoint!.object);
      }
      const keptScores = state.ticks.filter((t) => t.kept).map((t) => t.score ?? 0);
      expect(state.best.score).toBe(Math.max(state.baseline.score, ...keptScores));
      expect(git(dir, 'rev-parse', BEST)).toBe(state.best.commit);
      expect(git(dir, 'show', `${BEST}:score.txt`)).toBe(String(state.best.score));
      // The tree is the best checkpoint: no unscored edit of an interrupted tick survived.
      expect(await readFile(join(dir, 'score.txt'), 'utf8')).toBe(`${String(state.best.score)}\n`);
      const trail = existsSync(join(dir, 'trail.txt'))
        ? await readFile(join(dir, 'trail.txt'), 'utf8')
        : null;
      expect(trail).toBe(state.best.tick === 0 ? null : `${git(dir, 'show', `${BEST}:trail.txt`)}\n`);
      expect(git(dir, 'for-each-ref', '--format=%(refname)', `refs/allium-loop/${SLUG}/pending`)).toBe('');
      const violations = (await readJournal(dir, SLUG)).filter((e) => e['type'] === 'violation');
      expect(violations).toEqual([]);
      await recordFigure(
        'hill-climb-kills',
        `${String(kills)} kills -9 at random moments of an ${String(ticks)}-tick hill-climb (${String(resumes)} resumes, seed ${String(SEED)}): every kept checkpoint holds its scored tick, best and tree agree with the ledger, 0 unscored edits kept, 0 false violations`,
        { kills, seed: SEED },
      );
    },
  );
});

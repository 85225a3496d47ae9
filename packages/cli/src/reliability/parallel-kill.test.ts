import { readdir, readFile, readlink } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { branchPrefix, worktreeRoot } from '@allium-loop/orchestrator';
import { describe, expect, it } from 'vitest';
import {
  makeProject,
  readJournal,
  readLedger,
  runCli,
  startCli,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';
import { listFiles, seeded, waitForJournal } from './reliability.test-helpers.js';

const exec = promisify(execFile);
const ROOMS_AGENT = fileURLToPath(new URL('./fixtures/rooms-agent.mjs', import.meta.url));
const KILLS = Number(process.env['RELIABILITY_PARALLEL_KILLS'] ?? 2);
const SEED = Number(process.env['RELIABILITY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const GOAL = 'add lamps, doors and bells';
const SLUG = 'add-lamps-doors-and-bells';

/** A project with one entity; the goal adds three independent rooms (three slices that may run at once). */
const ROOMS_PROJECT: Record<string, string> = {
  'package.json': '{ "type": "module", "private": true }\n',
  'allium-loop.yaml': 'testCommand: node --test\n',
  'specs/house.allium': '-- allium: 3\nentity House {\n    name: String\n}\n',
  'src/house.js': 'export {};\n',
};

/** Three slices at once; every agent call takes 300 ms, so a wave lasts long enough to be killed inside. */
const RUN = [
  '--concurrency',
  '3',
  '--agent',
  'command',
  '--agent-command',
  `node ${ROOMS_AGENT} 300 {phase} {result_file}`,
];

interface FinalState {
  readonly terminal: string;
  readonly slices: readonly (readonly [string, string])[];
  readonly files: Record<string, string>;
}

async function finalState(dir: string): Promise<FinalState> {
  const ledger = await readLedger(dir, SLUG);
  const paths = (await listFiles(dir)).filter(
    (p) => !p.startsWith('.allium-loop/') && !p.startsWith('.git/'),
  );
  const files: Record<string, string> = {};
  for (const path of paths) files[path] = await readFile(join(dir, path), 'utf8');
  return {
    terminal: String(ledger['terminal']?.state),
    slices: (ledger['subGoals'] as LooseJson[]).map((g) => [String(g['id']), String(g['status'])] as const),
    files,
  };
}

/** Worktrees and slice branches of the run still in git, besides the main tree. */
async function leftInGit(dir: string): Promise<string[]> {
  const list = (await exec('git', ['worktree', 'list', '--porcelain'], { cwd: dir })).stdout;
  const branches = (
    await exec('git', ['for-each-ref', '--format=%(refname)', `refs/heads/${branchPrefix(SLUG)}`], {
      cwd: dir,
    })
  ).stdout;
  return [
    ...list
      .split('\n')
      .filter((l) => l.startsWith('worktree '))
      .slice(1),
    ...branches.split('\n').filter((b) => b !== ''),
  ];
}

/** Processes whose working directory is inside the project or the run's worktree folder (agents, test runs). */
async function processesIn(dir: string): Promise<string[]> {
  const roots = [dir, worktreeRoot(dir, SLUG)];
  const found: string[] = [];
  for (const pid of (await readdir('/proc')).filter((p) => /^\d+$/.test(p))) {
    if (Number(pid) === process.pid) continue;
    const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => undefined);
    if (cwd !== undefined && roots.some((r) => cwd === r || cwd.startsWith(`${r}/`))) {
      const cmd = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
      found.push(`${pid} ${cmd.replaceAll('\0', ' ').trim()}`);
    }
  }
  return found;
}

describe('kill -9 in the middle of a parallel wave', () => {
  it(
    'resume in a fresh process reaches the same final state, with no worktree or agent process left behind',
    { timeout: 1_800_000 },
    async () => {
      // The uninterrupted run: the final state every interrupted one must reach.
      const clean = await makeProject(ROOMS_PROJECT);
      const baselineRun = await runCli(['run', GOAL, ...RUN], clean);
      expect(baselineRun.code, baselineRun.stdout + baselineRun.stderr).toBe(0);
      const baseline = await finalState(clean);
      expect(baseline.terminal).toBe('converged');
      expect(Object.keys(baseline.files)).toEqual(
        expect.arrayContaining([
          'src/switchon.js',
          'src/opendoor.js',
          'src/ringbell.js',
          'test/integration.test.js',
        ]),
      );
      expect(await leftInGit(clean)).toEqual([]);

      const random = seeded(SEED);
      let landed = 0;
      for (let kill = 0; kill < KILLS; kill += 1) {
        const dir = await makeProject(ROOMS_PROJECT);
        const { child, done } = startCli(['run', GOAL, ...RUN], dir);
        // The kill moment is an event count, not a time: wait until the wave has started, then for a seeded
        // number of further journal events (up to 40), then SIGKILL the supervisor.
        const started = await waitForJournal(
          dir,
          SLUG,
          (events) => events.some((e) => e['data']?.['event'] === 'slice_started'),
          600_000,
        );
        const extra = Math.floor(random() * 40);
        await waitForJournal(dir, SLUG, (events) => events.length >= started.length + extra, 600_000);
        child.kill('SIGKILL');
        const killed = await done;
        const context = `seed ${String(SEED)}, kill ${String(kill)} after ${String(extra)} more event(s), in ${dir}`;
        if (killed.signal !== 'SIGKILL') {
          // The run finished before the kill landed: it must simply have converged.
          expect(killed.code, context).toBe(0);
        } else {
          landed += 1;
          // What the kill left: worktrees of the wave (removed by the resume, checked below).
          console.log(
            `parallel kill: ${context}; left ${String((await leftInGit(dir)).length)} worktree(s)/branch(es)`,
          );
          const resumed = await runCli(['resume', SLUG, ...RUN], dir);
          expect(resumed.code, `${context}\n${resumed.stdout}${resumed.stderr}`).toBe(0);
        }
        expect(await finalState(dir), context).toEqual(baseline);
        expect(await leftInGit(dir), context).toEqual([]);
        expect(await processesIn(dir), context).toEqual([]);
        // Every call the killed supervisor began ended (succeeded, reconciled or abandoned) in the ledger.
        const ledger = await readLedger(dir, SLUG);
        expect(
          (ledger['intents'] as LooseJson[]).filter((i) => i['outcome'] === null),
          context,
        ).toEqual([]);
        const journal = await readJournal(dir, SLUG);
        expect(
          journal.some((e) => e['type'] === 'terminal' && e['state'] === 'converged'),
          context,
        ).toBe(true);
      }
      console.log(
        `parallel kill: seed ${String(SEED)}, ${String(landed)} of ${String(KILLS)} kill(s) landed inside the run`,
      );
    },
  );
});

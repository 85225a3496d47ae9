import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeLedger } from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import {
  makeProject,
  readJournal,
  readLedger,
  runCli,
  startCli,
  writeScript,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';
import { recordFigure, seeded, waitForJournal, writePlan } from './reliability.test-helpers.js';

const KILLS = Number(process.env['STORIES_KILLS'] ?? 4);
const SEED = Number(process.env['RELIABILITY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
/** The longest wait after a process's first new journal line before it is killed. */
const MAX_DELAY_MS = 2500;

const PRD = {
  project: 'invoicing',
  userStories: [
    { id: 'US-1', title: 'Export CSV', priority: 1, passes: false, acceptanceCriteria: ['a CSV file'] },
    { id: 'US-2', title: 'Add a header', priority: 2, passes: false, acceptanceCriteria: ['a header row'] },
    { id: 'US-3', title: 'Two decimals', priority: 3, passes: false, acceptanceCriteria: ['amounts 0.00'] },
  ],
};

/** Every call answers the same way, so a call run again after a kill plays what the first one would have. */
const STEPS = [
  {
    phase: 'generate',
    delayMs: 300,
    write: { 'src/export.js': 'export const csv = "id,amount";\n' },
    repeat: true,
  },
  { phase: 'evaluate', delayMs: 300, result: { verdict: 'PASS' }, repeat: true },
];

async function slugOf(dir: string): Promise<string | undefined> {
  const names = await readdir(join(dir, '.allium-loop')).catch(() => [] as string[]);
  return names
    .find((n) => /^[a-z0-9-]+\.json$/.test(n) && !n.endsWith('.witness.json'))
    ?.replace(/\.json$/, '');
}

/** The outcome compared between interrupted and uninterrupted runs (dates and tick numbers left out). */
async function finalState(dir: string) {
  const slug = (await slugOf(dir))!;
  const ledger = JSON.parse(await readFile(join(dir, '.allium-loop', `${slug}.json`), 'utf8')) as {
    terminal?: { state: string };
    modeState: { stories?: { iterations: { story: string; verdict: string }[]; pending?: unknown } };
  };
  const prd = await readFile(join(dir, '.loop/prd.json'), 'utf8');
  const progress = await readFile(join(dir, '.loop/progress.md'), 'utf8');
  return {
    terminal: ledger.terminal?.state,
    prd,
    pending: ledger.modeState.stories?.pending ?? null,
    iterations: ledger.modeState.stories?.iterations.map((i) => `${i.story}:${i.verdict}`),
    progress: [
      ...progress.matchAll(/^### (US-\d) — .+\nDate: .+\nIteration: \d+\nVerdict: (.+)\n---\n/gm),
    ].map((m) => `${m[1]!}:${m[2]!}`),
    export: await readFile(join(dir, 'src/export.js'), 'utf8'),
  };
}

describe('--stories: kill -9 at a random moment, then resume in a fresh process', () => {
  it(
    `${String(KILLS)} kills end in the uninterrupted run's final state, with no story worked or logged twice`,
    { timeout: 900_000 },
    async () => {
      console.log(`stories kill suite: seed ${String(SEED)} (RELIABILITY_SEED=${String(SEED)} replays it)`);
      const files = { '.loop/prd.json': `${JSON.stringify(PRD, null, 2)}\n` };
      const reference = await makeProject(files);
      const args = (script: string) => [
        'run',
        '--stories',
        '.loop/prd.json',
        '--agent',
        'replay',
        '--agent-script',
        script,
      ];
      const uninterrupted = await runCli(args(await writeScript(reference, STEPS)), reference);
      expect(uninterrupted.code, uninterrupted.stdout + uninterrupted.stderr).toBe(0);
      const baseline = await finalState(reference);
      expect(baseline.terminal).toBe('converged');
      expect(baseline.progress).toEqual(['US-1:PASS', 'US-2:PASS', 'US-3:PASS']);

      const random = seeded(SEED);
      const dir = await makeProject(files);
      const script = await writeScript(dir, STEPS);
      let kills = 0;
      for (;;) {
        const slug = await slugOf(dir);
        const argv = slug === undefined ? args(script) : ['resume', slug];
        if (kills >= KILLS) {
          const last = await runCli(argv, dir);
          expect(last.code, `${dir}\n${last.stdout}${last.stderr}`).toBe(0);
          break;
        }
        const before = slug === undefined ? 0 : (await readJournal(dir, slug)).length;
        const { child, done } = startCli(argv, dir);
        let exited = false;
        void done.then(() => (exited = true));
        await Promise.race([
          (async () => {
            // Wait for the process to write something, then kill it at a random moment after that.
            for (let found = false; !found && !exited;) {
              const now = await slugOf(dir);
              if (now === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
              else
                found =
                  (await waitForJournal(dir, now, (events) => events.length > before, 200)).length > before;
            }
          })(),
          done,
        ]);
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * MAX_DELAY_MS)));
        if (!exited) child.kill('SIGKILL');
        const run = await done;
        if (run.signal !== 'SIGKILL') {
          expect(run.code, `${dir}\n${run.stdout}${run.stderr}`).toBe(0);
          break;
        }
        kills += 1;
        // The ledger is whole after every kill.
        const text = await readFile(join(dir, '.allium-loop', `${(await slugOf(dir))!}.json`), 'utf8');
        expect(decodeLedger(JSON.parse(text)).ok, dir).toBe(true);
      }
      const state = await finalState(dir);
      expect(state, dir).toEqual(baseline);
      // Nothing repeated: each story passed (and was logged) exactly once.
      const journal = await readJournal(dir, (await slugOf(dir))!);
      const passes = journal
        .filter((e) => e['type'] === 'x-stories.verdict')
        .map((e) => `${String(e['data']?.['story'])}:${String(e['data']?.['verdict'])}`);
      expect(passes).toEqual(['US-1:PASS', 'US-2:PASS', 'US-3:PASS']);
    },
  );
});

describe('--stories: forced compaction right before the last story completes', () => {
  it(
    'the supervisor is killed -9 just after the evaluator passed the last story, before the engine recorded it: a fresh resume converges once, no story recorded, written or logged twice',
    { timeout: 300_000 },
    async () => {
      const dir = await makeProject({ '.loop/prd.json': `${JSON.stringify(PRD, null, 2)}\n` });
      // The third evaluation (US-3, the last story) writes its PASS and kills the supervisor that started it: the
      // kill lands at that event, after the agent finished and before the engine read or recorded the verdict.
      const pass = { result: { verdict: 'PASS' } };
      const plan = await writePlan(dir, {
        generate: [{ write: { 'src/export.js': 'export const csv = "id,amount";\n' } }],
        evaluate: [pass, pass, { ...pass, killParent: true }, pass],
      });
      const killed = await runCli(
        ['run', '--stories', '.loop/prd.json', '--agent', 'command', '--agent-command', plan.command],
        dir,
      );
      expect(killed.signal, `${killed.stdout}${killed.stderr}`).toBe('SIGKILL');
      const slug = (await slugOf(dir))!;
      const cut = await finalState(dir);
      // What the lost context leaves: two stories recorded and written, the last one not.
      expect(cut.terminal).toBeUndefined();
      expect(cut.iterations).toEqual(['US-1:PASS', 'US-2:PASS']);
      expect(cut.progress).toEqual(['US-1:PASS', 'US-2:PASS']);
      expect(JSON.parse(cut.prd).userStories.map((s: LooseJson) => s['passes'])).toEqual([true, true, false]);

      const resumed = await runCli(['resume', slug], dir);
      expect(resumed.code, `${resumed.stdout}${resumed.stderr}`).toBe(0);
      const state = await finalState(dir);
      expect(state.terminal).toBe('converged');
      expect(state.pending).toBeNull();
      expect(state.iterations).toEqual(['US-1:PASS', 'US-2:PASS', 'US-3:PASS']);
      expect(state.progress).toEqual(['US-1:PASS', 'US-2:PASS', 'US-3:PASS']);
      expect(JSON.parse(state.prd).userStories.every((s: LooseJson) => s['passes'] === true)).toBe(true);
      expect(resumed.stdout).toContain('3/3 stories complete');
      const journal = await readJournal(dir, slug);
      // Each story passed once, the run ended once.
      expect(
        journal
          .filter((e) => e['type'] === 'x-stories.verdict')
          .map((e) => `${String(e['data']?.['story'])}:${String(e['data']?.['verdict'])}`),
      ).toEqual(['US-1:PASS', 'US-2:PASS', 'US-3:PASS']);
      expect(journal.filter((e) => e['type'] === 'terminal').map((e) => e['state'])).toEqual(['converged']);
      // The verdict the lost process never read is not taken on trust (its evaluator's edit check never ran): that
      // call is journaled abandoned, and its iteration is worked again in a new tick, once.
      const abandoned = journal.filter((e) => e['type'] === 'intent_ended' && e['status'] === 'abandoned');
      expect(abandoned.map((e) => e['tick'])).toEqual([3]);
      expect(await plan.calls()).toEqual({ generate: 4, evaluate: 4 });
      const ledger = await readLedger(dir, slug);
      expect(ledger['verdicts'].map((v: LooseJson) => v.tick)).toEqual([1, 2, 4]);
      await recordFigure(
        'stories-forced-compaction',
        'kill -9 right after the evaluator passed the last story (before the engine recorded it), resume in a fresh process: converged once, 3 verdicts and 3 progress entries (none twice), the unread verdict abandoned and its story worked once more',
      );
    },
  );
});

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  makeProject,
  readLedger,
  runCli,
  startCli,
  writeScript,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';
import { HOUSE_PROJECT, houseSteps } from '../e2e/house.test-helpers.js';
import { waitFor, waitForJournal } from './reliability.test-helpers.js';

const GOAL = 'add lamps, doors and bells to the house';
const SLUG = 'add-lamps-doors-and-bells-to-the-house';

describe('a run stopped inside a slice resumes that slice', () => {
  it(
    'Ctrl-C inside a slice, then the wall clock inside the slice, then resume and run of the goal converge',
    { timeout: 420_000 },
    async () => {
      // The second slice's first implement call hangs until Ctrl-C; the script's next implement step is the real
      // one. Tend takes 1.5 s, so more than a second of wall clock is used before any slice, whatever the machine.
      const dir = await makeProject(HOUSE_PROJECT);
      const script = await writeScript(dir, houseSteps({ tendDelayMs: 1500, hangInSlice: 1 }));
      const agent = ['--agent', 'replay', '--agent-script', script];

      // 1. Ctrl-C while the second slice's agent hangs.
      const { child, done } = startCli(['run', GOAL, ...agent], dir);
      // The replay agent records each call before playing it: wait until it is inside the hanging step.
      const replayState = join(dir, '.allium-loop', SLUG, 'replay-state.json');
      await waitFor(async () => {
        const text = await readFile(replayState, 'utf8').catch(() => '{}');
        return ((JSON.parse(text) as LooseJson)['calls']?.implement ?? 0) >= 2;
      }, 300_000);
      const events = await waitForJournal(dir, SLUG, (list) =>
        list.some((e) => e['type'] === 'intent_begun'),
      );
      expect(events.filter((e) => String(e['key']).includes('/implement/')).length).toBeGreaterThan(0);
      child.kill('SIGINT');
      const cancelled = await done;
      expect(cancelled.code, cancelled.stdout + cancelled.stderr).toBe(130);
      let ledger = await readLedger(dir, SLUG);
      expect(ledger['terminal'].state).toBe('cancelled');
      const stoppedIn = (ledger['subGoals'] as LooseJson[]).find((g) => g['status'] !== 'converged')!;
      expect(ledger['modeState'].slices[stoppedIn['id']].terminal.state).toBe('cancelled');

      // 2. Resume under a wall clock already used up: the slice stops on the cap, it does not end "at once".
      const capped = await runCli(['resume', SLUG, ...agent, '--wall-clock', '1'], dir);
      expect(capped.code, capped.stdout + capped.stderr).toBe(6);
      ledger = await readLedger(dir, SLUG);
      expect(ledger['terminal'].state).toBe('timed_out');
      expect(ledger['terminal'].detail).toContain('wall-clock');

      // 3. Resume with a larger wall clock continues that slice; `run` of the same goal continues it too.
      const resumed = await runCli(['run', GOAL, ...agent, '--wall-clock', '3600'], dir);
      expect(resumed.stdout).toContain('same goal as an unfinished run');
      expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0);
      ledger = await readLedger(dir, SLUG);
      expect(ledger['terminal'].state).toBe('converged');
      const goals = ledger['subGoals'] as LooseJson[];
      expect(goals.map((g) => g['status'])).toEqual(['converged', 'converged', 'converged', 'converged']);

      // list and status show the real tick count: every slice loop's ticks.
      const list = await runCli(['list', '--json'], dir);
      const row = JSON.parse(list.stdout.trim()) as LooseJson;
      expect(row['status']).toBe('converged');
      expect(row['ticks']).toBe(4);
      const status = await runCli(['status', SLUG], dir);
      expect(status.stdout).toContain('converged after 4 tick(s)');
    },
  );
});

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
import { FUNCTIONS, HOUSE_V1, HOUSE_V2, INTEGRATION, code, testFile } from '../e2e/house.test-helpers.js';
import { waitForJournal } from './reliability.test-helpers.js';

const GOAL = 'add lamps, doors and bells to the house';
const SLUG = 'add-lamps-doors-and-bells-to-the-house';

/** Polls `check` until it holds or `timeoutMs` passes. */
async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
}

const clean = {
  phase: 'weed',
  result: { phase: 'weed', clean: true, divergences: [], summary: 'clean' },
};

function implement(count: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    phase: 'implement',
    write: { 'src/house.js': code(count) },
    result: { phase: 'implement', filesChanged: ['src/house.js'], contestedTests: [], summary: `${count}` },
    ...extra,
  };
}

/**
 * Three slices and the integration pass. The second slice's first implement call hangs (a stuck agent) until the
 * user presses Ctrl-C; the script's next implement step is the real one. Tend takes 1.5 s, so the run has used
 * more than one second of wall clock before any slice starts, whatever the machine's speed.
 */
function steps(): Record<string, unknown>[] {
  const list: Record<string, unknown>[] = [
    {
      phase: 'tend',
      delayMs: 1500,
      write: { 'specs/house.allium': HOUSE_V2 },
      result: { phase: 'tend', specFiles: ['specs/house.allium'], openQuestions: [], summary: 'house' },
    },
  ];
  FUNCTIONS.forEach((entry, index) => {
    const path = `test/${entry[1]}.test.js`;
    list.push({
      phase: 'propagate',
      write: { [path]: testFile(entry) },
      result: { phase: 'propagate', testFiles: [{ path, covers: [entry[0]] }], summary: entry[0] },
    });
    if (index === 1) list.push(implement(1, { delayMs: 600_000, description: 'hangs until Ctrl-C' }));
    list.push(implement(index + 1), clean);
  });
  list.push(
    {
      phase: 'propagate',
      write: { 'test/integration.test.js': INTEGRATION },
      result: {
        phase: 'propagate',
        testFiles: [{ path: 'test/integration.test.js', covers: ['SwitchOn', 'OpenDoor', 'RingBell'] }],
        summary: 'together',
      },
    },
    clean,
  );
  return list;
}

describe('a run stopped inside a slice resumes that slice', () => {
  it(
    'Ctrl-C inside a slice, then the wall clock inside the slice, then resume and run of the goal converge',
    { timeout: 420_000 },
    async () => {
      const dir = await makeProject({
        'package.json': '{ "type": "module", "private": true }\n',
        'allium-loop.yaml': 'testCommand: node --test\n',
        'specs/house.allium': HOUSE_V1,
        'src/house.js': 'export {};\n',
      });
      const script = await writeScript(dir, steps());
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

import { execFile } from 'node:child_process';
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_BIN, makeProject, readJournal, readLedger } from './e2e.test-helpers.js';

const exec = promisify(execFile);
const EXAMPLE = fileURLToPath(new URL('../../../../examples/loop-verify', import.meta.url));
const STEP_AGENT = fileURLToPath(new URL('../reliability/fixtures/step-agent.mjs', import.meta.url));
const SLUG = 'take-three-steps';

/**
 * The `/loop` setup of examples/loop-verify copied into a git repository, with a scripted agent configured in
 * allium-loop.yaml (the only addition: which agent runs); `sh loop.sh` runs as it is.
 */
async function loopSetup(target: number): Promise<{ dir: string; calls: () => Promise<number> }> {
  const dir = await makeProject({});
  await cp(EXAMPLE, dir, { recursive: true });
  const log = `${dir}-calls.log`;
  await writeFile(
    join(dir, 'allium-loop.yaml'),
    `agent:\n  kind: command\n  argv: [${JSON.stringify(process.execPath)}, ${JSON.stringify(STEP_AGENT)}, ${JSON.stringify(log)}, "${String(target)}"]\n`,
  );
  return {
    dir,
    calls: async () =>
      (await readFile(log, 'utf8').catch(() => '')).split('\n').filter((line) => line !== '').length,
  };
}

async function runLoopScript(dir: string): Promise<{ code: number; stdout: string }> {
  const env = {
    ...process.env,
    FORCE_COLOR: '0',
    CI: 'true',
    ALLIUM_LOOP: `${process.execPath} ${CLI_BIN}`,
  };
  try {
    const { stdout } = await exec('sh', ['loop.sh'], { cwd: dir, env });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '' };
  }
}

describe(
  '/loop compatibility: examples/loop-verify runs unchanged (issue 22 item 5)',
  { timeout: 300_000 },
  () => {
    it('a loop that reaches its check: the script reads CONVERGED and exits 0', async () => {
      const { dir, calls } = await loopSetup(3);
      const run = await runLoopScript(dir);
      expect(run.stdout, run.stdout).toContain('loop: CONVERGED');
      expect(run.code).toBe(0);
      const ledger = await readLedger(dir, SLUG);
      // --max-iterations is the tick cap; --interval 1 is one second between ticks.
      expect(ledger['caps'].maxTicks).toBe(5);
      expect(ledger['modeState']['verify'].config.intervalMs).toBe(1000);
      expect(ledger['terminal']).toMatchObject({ state: 'converged', reason: 'command_passed' });
      expect(await calls()).toBe(3);
      const events = (await readFile(join(dir, 'loop-events.ndjson'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; data?: unknown; state?: string });
      // Our own terminal event stays as it was, last; the /loop name comes just before it.
      expect(events.at(-1)).toMatchObject({ type: 'terminal', state: 'converged' });
      expect(events.at(-2)).toMatchObject({
        type: 'x-verify.exit',
        data: { status: 'CONVERGED', state: 'converged' },
      });
      // The revision is recorded per step, not only at the baseline.
      const head = (await exec('git', ['rev-parse', 'HEAD'], { cwd: dir })).stdout.trim();
      const ticks = ledger['modeState']['verify'].ticks as { tick: number; head: string }[];
      expect(ticks.map((t) => [t.tick, t.head])).toEqual([
        [1, head],
        [2, head],
        [3, head],
      ]);
      const exits = (await readJournal(dir, SLUG)).filter((e) => e['type'] === 'x-verify.exit');
      expect(exits).toHaveLength(1);
    });

    it('a loop that runs out of iterations: the script reads EXHAUSTED and exits 3', async () => {
      const { dir, calls } = await loopSetup(2);
      const run = await runLoopScript(dir);
      expect(run.stdout, run.stdout).toContain('loop: EXHAUSTED');
      expect(run.code).toBe(3);
      const ledger = await readLedger(dir, SLUG);
      // check.sh prints nothing and exits 1 on every tick: three identical measurements end the run no_progress,
      // one of the bounds /loop calls EXHAUSTED.
      expect(ledger['terminal'].state).toBe('no_progress');
      expect(await calls()).toBe(3);
    });
  },
);

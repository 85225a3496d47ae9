import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startScriptedModel, type ScriptedModelServer } from '@allium-loop/scripted-model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  makeProject,
  readJournal,
  readLedger,
  runCli,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';
import {
  BROKEN_TALLY,
  DIRTY_WEED,
  CLEAN_WEED,
  implementResult,
} from '../reliability/reliability.test-helpers.js';
import {
  REAL_CLIS,
  agentConfigFor,
  announceSkips,
  configureProject,
  envFor,
} from './real-agents.test-helpers.js';

announceSkips();

const FIXED_TALLY = TALLY_PROJECT['src/tally.js']!;

/**
 * How each CLI meets the 429s: Claude Code retries once itself (and announces its wait, which becomes the reset
 * time), so each engine call eats two 429s and two engine calls are refused; Codex is told not to retry, so one
 * refused call is one 429, and with no reset time shown the engine waits its default (60 s) once.
 */
const PLAN = {
  claude: { retries: 1, refusedCalls: 2 },
  codex: { retries: 0, refusedCalls: 1 },
} as const;

describe.each(REAL_CLIS.map((cli) => [cli.name, cli] as const))(
  'the loop with the real %s meets HTTP 429 with retry-after',
  { timeout: 900_000 },
  (name, cli) => {
    let server: ScriptedModelServer;
    beforeAll(async () => {
      server = await startScriptedModel();
    });
    afterAll(async () => {
      await server?.close();
    });

    it.skipIf('skipReason' in cli)(
      'the engine waits the limit out (journaled), the refused calls are neither failures nor a no-progress tick, and the run converges',
      async () => {
        const plan = PLAN[name as keyof typeof PLAN];
        const times = plan.refusedCalls * (plan.retries + 1);
        server.setScript([
          { name: 'weed dirty', match: '# Phase: weed ', actions: [{ kind: 'result', value: DIRTY_WEED }] },
          {
            name: 'implement, rate limited first',
            match: '# Phase: implement ',
            fault: { kind: 'rate_limit', retryAfterSeconds: 1, times },
            actions: [
              { kind: 'write', path: 'src/tally.js', content: FIXED_TALLY },
              { kind: 'result', value: implementResult(['src/tally.js']) },
            ],
            repeat: true,
          },
          {
            name: 'weed clean',
            match: '# Phase: weed ',
            actions: [{ kind: 'result', value: CLEAN_WEED }],
            repeat: true,
          },
        ]);
        server.clearRequests();
        const dir = await makeProject({ ...TALLY_PROJECT, 'src/tally.js': BROKEN_TALLY });
        // One no-progress tick would stop the run, so a refused call counted as one cannot pass unseen.
        await configureProject(dir, agentConfigFor(cli), {
          maxTicks: 4,
          noProgressTicks: 1,
          agentTimeoutSeconds: 300,
        });
        const run = await runCli(
          ['run', DRIFT_GOAL],
          dir,
          await envFor(name, server, { retries: plan.retries }),
        );
        const ledger = await readLedger(dir, DRIFT_SLUG);
        const journal = await readJournal(dir, DRIFT_SLUG);
        const story = `${run.stdout}\n${run.stderr}`;

        // The server refused exactly the scripted number of requests, and the CLI really asked that often.
        expect(server.requests.filter((r) => r.fault === 'rate_limit').length, story).toBe(times);

        // The engine waited once per refused call, and journaled each wait.
        const waits = journal.filter((e: LooseJson) => e['type'] === 'x-loop.rate_limit_wait');
        expect(waits.length, story).toBe(plan.refusedCalls);
        expect(waits.every((w: LooseJson) => w['data']?.['kind'] === 'waited')).toBe(true);
        if (name === 'claude')
          // The reset came from the wait Claude Code announced, not the engine's default.
          expect(waits.every((w: LooseJson) => w['data']?.['resetKnown'] === true)).toBe(true);
        else expect(waits.every((w: LooseJson) => w['data']?.['resetKnown'] === false)).toBe(true);

        // Every implement call, refused or not, ran in the same tick: the rerun took no new tick.
        const implementStarts = journal.filter(
          (e: LooseJson) => e['type'] === 'phase_started' && e['phase'] === 'implement',
        );
        expect(implementStarts.length).toBe(plan.refusedCalls + 1);
        expect(new Set(implementStarts.map((e: LooseJson) => e['tick'])).size).toBe(1);

        // Not a failed attempt of the phase.
        const loop = ledger['modeState']?.['loop'] as LooseJson | undefined;
        expect(loop?.['phaseFailures'], JSON.stringify(ledger['modeState'])).toBeDefined();
        expect(loop!['phaseFailures']['implement'] ?? 0).toBe(0);

        // And the run converged, with the fix made through the CLI's own tools.
        expect(ledger['terminal']?.state, story).toBe('converged');
        expect(run.code).toBe(0);
        expect(await readFile(join(dir, 'src/tally.js'), 'utf8')).toBe(FIXED_TALLY);
      },
    );
  },
);

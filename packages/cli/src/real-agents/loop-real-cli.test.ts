import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  startScriptedModel,
  type RealCliEnvOptions,
  type ScriptedCall,
  type ScriptedModelServer,
} from '@allium-loop/scripted-model';
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
  CLEAN_WEED,
  DIRTY_WEED,
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

const TEST = TALLY_PROJECT['test/tally.test.js']!;
/** The line of the one test, which the cheating model marks `.skip`. */
const TEST_LINE = `${TEST.split('\n').find((line) => line.startsWith("test('"))!}\n`;
const FIXED_TALLY = TALLY_PROJECT['src/tally.js']!;

/**
 * How each CLI meets the 429s: Claude Code retries once itself (and announces its wait, which becomes the reset
 * time), so each engine call eats two 429s and two engine calls are refused; Codex is told not to retry, so one
 * refused call is one 429, and with no reset time shown the engine waits its default (60 s) once.
 */
const RATE_LIMIT_PLAN = {
  claude: { retries: 1, refusedCalls: 2 },
  codex: { retries: 0, refusedCalls: 1 },
} as const;

describe.each(REAL_CLIS.map((cli) => [cli.name, cli] as const))(
  'the loop with the real %s: cheats, refused keys and rate limits',
  { timeout: 900_000 },
  (name, cli) => {
    let server: ScriptedModelServer;
    beforeAll(async () => {
      server = await startScriptedModel();
    });
    afterAll(async () => {
      await server?.close();
    });

    async function drift(
      script: ScriptedCall[],
      caps: Record<string, number> = { maxTicks: 2 },
      envOptions: RealCliEnvOptions = {},
    ) {
      server.setScript(script);
      server.clearRequests();
      const dir = await makeProject({ ...TALLY_PROJECT, 'src/tally.js': BROKEN_TALLY });
      await configureProject(dir, agentConfigFor(cli), { ...caps, agentTimeoutSeconds: 300 });
      const run = await runCli(['run', DRIFT_GOAL], dir, await envFor(name, server, envOptions));
      return {
        dir,
        run,
        ledger: await readLedger(dir, DRIFT_SLUG),
        journal: await readJournal(dir, DRIFT_SLUG),
      };
    }

    it.skipIf('skipReason' in cli)(
      'a model that adds .skip to the failing test through the CLI’s own Edit: caught, reverted, never converged',
      async () => {
        const { dir, ledger, journal, run } = await drift([
          { name: 'weed dirty', match: '# Phase: weed ', actions: [{ kind: 'result', value: DIRTY_WEED }] },
          {
            name: 'implement cheats',
            match: '# Phase: implement ',
            actions: [
              {
                kind: 'edit',
                path: 'test/tally.test.js',
                oldText: TEST_LINE,
                newText: TEST_LINE.replace("test('", "test.skip('"),
              },
              { kind: 'result', value: implementResult(['test/tally.test.js']) },
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
        // The edit really went through the CLI: the server asked for it and the engine saw the marker rise.
        expect(server.requests.some((r) => r.reply === (name === 'claude' ? 'Edit' : 'apply_patch'))).toBe(
          true,
        );
        const violations = journal.filter((e: LooseJson) => e['type'] === 'violation');
        expect(
          violations.map((v: LooseJson) => v['kind']),
          run.stdout,
        ).toContain('test_markers_rose');
        expect(violations.every((v: LooseJson) => v['reverted'] === true)).toBe(true);
        expect(await readFile(join(dir, 'test/tally.test.js'), 'utf8')).toBe(TEST);
        expect(ledger['terminal'].state).not.toBe('converged');
        expect((ledger['verdicts'] as LooseJson[]).some((v) => v['converged'] === true)).toBe(false);
      },
    );

    it.skipIf('skipReason' in cli)(
      'a refused key (HTTP 401): the run ends failed, the error names the CLI’s key variable, the ledger is intact',
      async () => {
        const { dir, ledger, journal, run } = await drift([
          { name: 'refused', match: '# Phase: ', fault: { kind: 'unauthorized' }, repeat: true },
        ]);
        const variable = name === 'claude' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
        expect(ledger['terminal']?.state, `${run.stdout}\n${run.stderr}`).toBe('failed');
        expect(`${run.stdout}\n${run.stderr}\n${JSON.stringify(ledger['terminal'])}`).toContain(variable);
        expect(run.code).not.toBe(0);
        // Nothing lost: every call that began ended, the project files are untouched, the journal closes.
        expect((ledger['intents'] as LooseJson[]).every((i) => i['outcome'] !== null)).toBe(true);
        expect(journal.at(-1)?.['type']).toBe('terminal');
        expect(await readFile(join(dir, 'src/tally.js'), 'utf8')).toBe(BROKEN_TALLY);
        expect(await readFile(join(dir, 'test/tally.test.js'), 'utf8')).toBe(TEST);
      },
    );

    it.skipIf('skipReason' in cli)(
      'HTTP 429 with retry-after: the engine waits the limit out (journaled), the refused calls are neither failures nor a no-progress tick, and the run converges',
      async () => {
        const plan = RATE_LIMIT_PLAN[name as keyof typeof RATE_LIMIT_PLAN];
        const times = plan.refusedCalls * (plan.retries + 1);
        const { dir, run, ledger, journal } = await drift(
          [
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
          ],
          // One no-progress tick would stop the run, so a refused call counted as one cannot pass unseen.
          { maxTicks: 4, noProgressTicks: 1 },
          { retries: plan.retries },
        );
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

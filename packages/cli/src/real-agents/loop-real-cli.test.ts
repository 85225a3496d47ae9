import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startScriptedModel, type ScriptedCall, type ScriptedModelServer } from '@allium-loop/scripted-model';
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
import { BROKEN_TALLY, CLEAN_WEED, DIRTY_WEED, implementResult } from '../reliability/reliability.test-helpers.js';
import { REAL_CLIS, agentConfigFor, announceSkips, configureProject, envFor } from './real-agents.test-helpers.js';

announceSkips();

const TEST = TALLY_PROJECT['test/tally.test.js']!;
/** The line of the one test, which the cheating model marks `.skip`. */
const TEST_LINE = `${TEST.split('\n').find((line) => line.startsWith("test('"))!}\n`;

describe.each(REAL_CLIS.map((cli) => [cli.name, cli] as const))(
  'the loop with the real %s: cheats and refused keys',
  { timeout: 600_000 },
  (name, cli) => {
    let server: ScriptedModelServer;
    beforeAll(async () => {
      server = await startScriptedModel();
    });
    afterAll(async () => {
      await server?.close();
    });

    async function drift(script: ScriptedCall[]) {
      server.setScript(script);
      server.clearRequests();
      const dir = await makeProject({ ...TALLY_PROJECT, 'src/tally.js': BROKEN_TALLY });
      await configureProject(dir, agentConfigFor(cli), { maxTicks: 2, agentTimeoutSeconds: 300 });
      const run = await runCli(['run', DRIFT_GOAL], dir, await envFor(name, server));
      return { dir, run, ledger: await readLedger(dir, DRIFT_SLUG), journal: await readJournal(dir, DRIFT_SLUG) };
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
              { kind: 'edit', path: 'test/tally.test.js', oldText: TEST_LINE, newText: TEST_LINE.replace("test('", "test.skip('") },
              { kind: 'result', value: implementResult(['test/tally.test.js']) },
            ],
            repeat: true,
          },
          { name: 'weed clean', match: '# Phase: weed ', actions: [{ kind: 'result', value: CLEAN_WEED }], repeat: true },
        ]);
        // The edit really went through the CLI: the server asked for it and the engine saw the marker rise.
        expect(server.requests.some((r) => r.reply === (name === 'claude' ? 'Edit' : 'apply_patch'))).toBe(true);
        const violations = journal.filter((e: LooseJson) => e['type'] === 'violation');
        expect(violations.map((v: LooseJson) => v['kind']), run.stdout).toContain('test_markers_rose');
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
  },
);

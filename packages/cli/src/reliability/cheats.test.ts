import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  makeProject,
  readJournal,
  readLedger,
  runCli,
  writeScript,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';
import {
  BROKEN_TALLY,
  CLEAN_WEED,
  DIRTY_WEED,
  FAST_TALLY,
  implementResult,
  recordFigure,
} from './reliability.test-helpers.js';

const SPEC = TALLY_PROJECT['specs/tally.allium']!;
const TEST = TALLY_PROJECT['test/tally.test.js']!;

/** Runs the drift goal with a replay script and returns what a reader of the run would look at. */
async function drift(files: Record<string, string>, steps: LooseJson[]) {
  const dir = await makeProject(files);
  const script = await writeScript(dir, steps);
  const run = await runCli(
    ['run', DRIFT_GOAL, '--agent', 'replay', '--agent-script', script, '--max-ticks', '2'],
    dir,
  );
  const ledger = await readLedger(dir, DRIFT_SLUG);
  const journal = await readJournal(dir, DRIFT_SLUG);
  return { dir, run, ledger, journal };
}

/** The run never converged: no verdict says so and the terminal state is something else. */
function expectNeverConverged(ledger: LooseJson): void {
  expect(ledger['terminal'].state).not.toBe('converged');
  expect((ledger['verdicts'] as LooseJson[]).some((v) => v['converged'] === true)).toBe(false);
}

const SPEC_CHEATS: Record<string, { write: Record<string, string>; kinds: string[] }> = {
  'deletes a spec rule': {
    write: { 'specs/tally.allium': SPEC.slice(0, SPEC.indexOf('rule CloseTally')) },
    kinds: ['spec_edited_out_of_phase', 'spec_construct_removed'],
  },
  'adds -- allium-ignore': {
    write: { 'specs/tally.allium': SPEC.replace('rule CloseTally {', 'rule CloseTally { -- allium-ignore') },
    kinds: ['spec_edited_out_of_phase', 'suppression_added'],
  },
};

describe.concurrent(
  'cheats through the CLI: detected, reverted, journaled, never converged on',
  { timeout: 240_000 },
  () => {
    it('an implement that adds .skip to the failing test: reverted, the test still fails, no convergence', async () => {
      const skipped = TEST.replace("test('", "test.skip('");
      const { dir, ledger, journal } = await drift({ ...TALLY_PROJECT, 'src/tally.js': BROKEN_TALLY }, [
        { phase: 'weed', result: DIRTY_WEED },
        {
          phase: 'implement',
          write: { 'test/tally.test.js': skipped },
          result: implementResult(['test/tally.test.js']),
          repeat: true,
        },
        { phase: 'weed', result: CLEAN_WEED, repeat: true },
      ]);
      const violations = journal.filter((e) => e['type'] === 'violation');
      expect(violations.map((v) => v['kind'])).toContain('test_markers_rose');
      expect(violations.every((v) => v['reverted'] === true)).toBe(true);
      expect(await readFile(join(dir, 'test/tally.test.js'), 'utf8')).toBe(TEST);
      expectNeverConverged(ledger);
      await recordFigure(
        'cheat-skip',
        `.skip: ${String(violations.length)} violation(s) journaled and reverted; ended ${String(ledger['terminal'].state)}, not converged`,
      );
    });

    for (const [name, cheat] of Object.entries(SPEC_CHEATS)) {
      it(`an implement that ${name}: reverted, journaled, never converged on`, async () => {
        const { dir, ledger, journal } = await drift(FAST_TALLY, [
          { phase: 'weed', result: DIRTY_WEED, repeat: true },
          { phase: 'implement', write: cheat.write, result: implementResult(['src/tally.js']), repeat: true },
        ]);
        const violations = journal.filter((e) => e['type'] === 'violation');
        for (const kind of cheat.kinds) expect(violations.map((v) => v['kind'])).toContain(kind);
        expect(violations.every((v) => v['reverted'] === true)).toBe(true);
        expect(await readFile(join(dir, 'specs/tally.allium'), 'utf8')).toBe(SPEC);
        expect(
          journal.some(
            (e) => e['type'] === 'phase_ended' && e['phase'] === 'implement' && e['outcome'] === 'failed',
          ),
        ).toBe(true);
        expectNeverConverged(ledger);
        await recordFigure(
          `cheat-${name.split(' ')[0] === 'adds' ? 'ignore' : 'rule'}`,
          `${name}: ${String(violations.length)} violation(s) journaled and reverted; ended ${String(ledger['terminal'].state)}, not converged`,
        );
      });
    }

    it('an implement that weakens a protected (generated) test: restored from the engine copy, never converged on', async () => {
      const dir = await makeProject({
        'package.json': '{ "type": "module", "private": true }\n',
        'allium-loop.yaml': 'testCommand: node --test\n',
        'src/tally.js': 'export {};\n',
      });
      const generated = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tally from '../src/tally.js';
test('CloseTally closes an open tally', () => { const t = { status: 'open' }; tally.closeTally(t); assert.equal(t.status, 'closed'); });
`;
      const weakened = generated.replace("assert.equal(t.status, 'closed');", 'assert.ok(true);');
      const script = await writeScript(dir, [
        {
          phase: 'elicit',
          write: { 'specs/tally.allium': SPEC },
          result: { phase: 'elicit', specFiles: ['specs/tally.allium'], openQuestions: [], summary: 'Tally' },
        },
        {
          phase: 'propagate',
          write: { 'test/tally.test.js': generated },
          result: {
            phase: 'propagate',
            testFiles: [{ path: 'test/tally.test.js', covers: ['CloseTally'] }],
            summary: 'one test',
          },
        },
        {
          phase: 'implement',
          write: { 'test/tally.test.js': weakened },
          result: implementResult(['test/tally.test.js']),
          repeat: true,
        },
        { phase: 'weed', result: CLEAN_WEED, repeat: true },
      ]);
      const slug = 'add-a-tally-counter-that-can-be-closed';
      const run = await runCli(
        [
          'run',
          'add a tally counter that can be closed',
          '--agent',
          'replay',
          '--agent-script',
          script,
          '--max-ticks',
          '2',
        ],
        dir,
      );
      const journal = await readJournal(dir, slug);
      const violations = journal.filter((e) => e['type'] === 'violation');
      expect(
        violations.map((v) => v['kind']),
        run.stdout,
      ).toContain('protected_test_changed');
      expect(violations.every((v) => v['reverted'] === true)).toBe(true);
      expect(await readFile(join(dir, 'test/tally.test.js'), 'utf8')).toBe(generated);
      const ledger = await readLedger(dir, slug);
      expectNeverConverged(ledger);
      await recordFigure(
        'cheat-protected',
        `protected test weakened: ${String(violations.length)} violation(s) journaled, restored from the engine copy; ended ${String(ledger['terminal'].state)}, not converged`,
      );
    });

    it('a result claiming success while the tests fail is never accepted as done', async () => {
      const { ledger, journal } = await drift({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY }, [
        { phase: 'weed', result: DIRTY_WEED },
        { phase: 'implement', result: implementResult(['src/tally.js'], 'all tests pass now'), repeat: true },
        { phase: 'weed', result: CLEAN_WEED, repeat: true },
      ]);
      expectNeverConverged(ledger);
      const verdicts = ledger['verdicts'] as LooseJson[];
      expect(verdicts.every((v) => v['tests'].failed > 0)).toBe(true);
      expect(journal.some((e) => e['type'] === 'terminal' && e['state'] === 'converged')).toBe(false);
      await recordFigure(
        'false-success',
        `a result claiming "all tests pass" while 1 test fails: ${String(verdicts.length)} verdict(s), 0 converged; ended ${String(ledger['terminal'].state)}`,
      );
    });

    it('a result naming files that do not exist fails the phase and is never accepted as done', async () => {
      const { ledger, journal } = await drift({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY }, [
        { phase: 'weed', result: DIRTY_WEED },
        { phase: 'implement', result: implementResult(['src/ghost.js']), repeat: true },
        { phase: 'weed', result: CLEAN_WEED, repeat: true },
      ]);
      const implement = journal.filter((e) => e['type'] === 'phase_ended' && e['phase'] === 'implement');
      expect(implement.length).toBeGreaterThan(0);
      expect(
        implement.every((e) => e['outcome'] === 'failed' && String(e['detail']).includes('src/ghost.js')),
      ).toBe(true);
      expectNeverConverged(ledger);
      await recordFigure(
        'ghost-files',
        `a result naming src/ghost.js: ${String(implement.length)} implement call(s) failed naming it; ended ${String(ledger['terminal'].state)}, not converged`,
      );
    });
  },
);

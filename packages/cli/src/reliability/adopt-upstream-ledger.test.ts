import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  expectUpstreamValid,
  makeProject,
  readJournal,
  readLedger,
  runCli,
  weedStep,
  writeScript,
} from '../e2e/e2e.test-helpers.js';

/** Ledgers written by hand from the upstream ledger.schema.json and driving-the-loop.md §8, as the skill writes them. */
const fixture = (name: string) =>
  readFile(new URL(`./fixtures/upstream-ledgers/${name}`, import.meta.url), 'utf8');

/** A project holding the upstream skill's ledger for the drift goal (and nothing else under `.allium-loop/`). */
async function projectWith(ledgerText: string): Promise<string> {
  const dir = await makeProject(TALLY_PROJECT);
  await mkdir(join(dir, '.allium-loop'), { recursive: true });
  await writeFile(join(dir, '.allium-loop', `${DRIFT_SLUG}.json`), ledgerText);
  return dir;
}

describe('a ledger the upstream /allium skill wrote', { timeout: 300_000 }, () => {
  for (const command of ['resume', 'run'] as const) {
    it(`${command}: is adopted, announced and journaled, carried on to converged; its upstream fields stay current and valid`, async () => {
      const upstream = JSON.parse(await fixture('mid-run.json')) as Record<string, unknown>;
      await expectUpstreamValid('ledger.schema.json', upstream);
      const dir = await projectWith(await fixture('mid-run.json'));
      const script = await writeScript(dir, [weedStep(false)]);
      const args = command === 'resume' ? ['resume', DRIFT_SLUG] : ['run', DRIFT_GOAL];
      const result = await runCli([...args, '--agent', 'replay', '--agent-script', script], dir);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      // Said where the run's other announcements go (the entry, the test command).
      expect(result.stdout).toContain(
        `Adopting the ledger the upstream /allium skill wrote (.allium-loop/${DRIFT_SLUG}.json)`,
      );
      expect(result.stdout).toContain('spec-first, tick 2; 1 parked question(s), 1 completed sub-goal(s)');
      expect(result.stdout).toContain(
        '1 generated test(s) protected, not adopted: test/gone.test.js (file missing)',
      );
      // No second run beside it, no corrupt backup.
      expect((await readdir(join(dir, '.allium-loop'))).filter((n) => n.endsWith('.json')).sort()).toEqual(
        expect.not.arrayContaining([expect.stringContaining('corrupt')]),
      );

      const ledger = await readLedger(dir, DRIFT_SLUG);
      await expectUpstreamValid('ledger.schema.json', ledger);
      expect(ledger['terminal'].state).toBe('converged');
      expect(ledger['goal']).toBe(DRIFT_GOAL);
      expect(ledger['mode']).toBe('spec-first');
      expect(ledger['entry'].mode).toBe('spec-first');
      // The tick count is carried: the loop went on from tick 2.
      expect(ledger['tick']).toBeGreaterThan(2);
      expect(ledger['verdicts'][0].tick).toBe(3);
      // The upstream fields, kept current.
      expect(ledger['open_questions']).toEqual(['Should a closed tally record who closed it?']);
      expect(ledger['completed_sub_goals']).toEqual(['tally-core']);
      expect(ledger['generated_test_hashes']).toEqual({
        'test/tally.test.js': 'sha256:730005cb1c677ac3ec373ebd8b4d34a8a162df344f9443985f20779a5865e2c0',
      });
      expect(ledger['witness_records'][0]).toBe('tick 1: FAIL — tests 0/1');
      expect(ledger['witness_records'].length).toBeGreaterThan(1);
      expect(ledger['reconciliation']).toBe('1 obligations, 1 covered, 0 uncovered');
      expect(ledger['protectedTests'].map((t: { path: string }) => t.path)).toEqual(['test/tally.test.js']);
      expect(ledger['questions'][0]).toMatchObject({
        classification: 'parked',
        status: 'open',
        phase: 'upstream',
      });

      const events = await readJournal(dir, DRIFT_SLUG);
      const note = events.find((e) => e['type'] === 'note' && e['data']?.kind === 'upstream_adopted');
      expect(note?.['data']).toMatchObject({
        mode: 'spec-first',
        tick: 2,
        protectedTests: ['test/tally.test.js'],
        skippedTests: [{ path: 'test/gone.test.js', why: 'file missing' }],
      });

      // A later resume reads it as this engine's own ledger (no second adoption).
      const again = await runCli(['resume', DRIFT_SLUG], dir);
      expect(again.stdout + again.stderr).not.toContain('Adopting');
      expect(again.stderr + again.stdout).toContain('already ended: converged');
    });
  }

  it('code-first: the mode is carried as the run entry mode', async () => {
    const text = (await fixture('mid-run.json')).replace('"spec-first"', '"code-first"');
    const dir = await projectWith(text);
    const script = await writeScript(dir, [weedStep(false)]);
    const result = await runCli(
      ['resume', DRIFT_SLUG, '--agent', 'replay', '--agent-script', script, '--max-ticks', '3'],
      dir,
    );
    expect(result.stdout).toContain('code-first, tick 2');
    const ledger = await readLedger(dir, DRIFT_SLUG);
    await expectUpstreamValid('ledger.schema.json', ledger);
    expect(ledger['mode']).toBe('code-first');
    expect(ledger['entry'].mode).toBe('code-first');
  });

  const foreign: Record<string, { text: () => Promise<string>; why: string }> = {
    'schema-invalid (mode tests-first)': {
      text: () => fixture('bad-mode.json'),
      why: 'no allium-loop keys, and not a valid upstream Allium ledger (ledger.schema.json)',
    },
    'torn (cut mid-write)': {
      text: async () => (await fixture('mid-run.json')).slice(0, 150),
      why: 'is corrupt and was not modified',
    },
  };
  for (const [name, { text: read, why }] of Object.entries(foreign)) {
    it(`${name}: resume and run refuse it with a clear message and leave it byte-identical`, async () => {
      const text = await read();
      const dir = await projectWith(text);
      const script = await writeScript(dir, [weedStep(false)]);
      for (const args of [
        ['resume', DRIFT_SLUG],
        ['run', DRIFT_GOAL],
      ]) {
        const result = await runCli([...args, '--agent', 'replay', '--agent-script', script], dir);
        expect(result.code, result.stdout + result.stderr).toBe(1);
        expect(result.stderr).toContain(why);
        expect(result.stdout + result.stderr).not.toContain('Adopting');
        expect(await readFile(join(dir, '.allium-loop', `${DRIFT_SLUG}.json`), 'utf8')).toBe(text);
      }
    });
  }
});

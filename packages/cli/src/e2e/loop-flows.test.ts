import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  makeProject,
  propagateStep,
  specRecord,
  readJournal,
  readLedger,
  readTrace,
  readWitness,
  runCli,
  startCli,
  writeScript,
  type LooseJson,
} from './e2e.test-helpers.js';

const SPEC_WITH_QUESTION = `-- allium: 3
entity Tally {
    count: Integer
    status: open | closed
}

rule CloseTally {
    when: CloseRequested(tally)
    requires: tally.status = open
    ensures: tally.status = closed
}

open question "May a closed tally be reopened?"
`;

const SPEC_ANSWERED = SPEC_WITH_QUESTION.replace(
  'open question "May a closed tally be reopened?"\n',
  '-- A closed tally stays closed (answered by the user).\n',
);

const TALLY_TEST = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as tally from '../src/tally.js';
test('CloseTally closes an open tally', () => { const t = { status: 'open' }; tally.closeTally(t); assert.equal(t.status, 'closed'); });
`;

const TALLY_CODE =
  "export function closeTally(t) { if (t.status !== 'open') throw new Error('closed'); t.status = 'closed'; }\n";

const NEW_PROJECT = {
  'package.json': '{ "type": "module", "private": true }\n',
  'allium-loop.yaml': 'testCommand: node --test\n',
  'src/tally.js': 'export {};\n',
};

const QUESTION_GOAL = 'add a tally counter that can be closed';
const QUESTION_SLUG = 'add-a-tally-counter-that-can-be-closed';

describe('loop flows through the CLI', () => {
  it('a blocking question stops in awaiting_input; answer + resume writes it into the spec and converges', async () => {
    const dir = await makeProject(NEW_PROJECT);
    const script = await writeScript(dir, [
      {
        phase: 'elicit',
        write: { 'specs/tally.allium': SPEC_WITH_QUESTION },
        result: specRecord('elicit', 'specs/tally.allium', 'Tally with CloseTally', [
          'May a closed tally be reopened?',
        ]),
        loop: {
          open_questions: [
            {
              text: 'May a closed tally be reopened?',
              classification: 'blocking',
              why: 'the next rule depends on it',
            },
          ],
        },
      },
      {
        phase: 'tend',
        write: { 'specs/tally.allium': SPEC_ANSWERED },
        result: {
          phase: 'tend',
          spec_path: 'specs/tally.allium',
          open_questions: [],
          summary: 'answer written in',
        },
      },
      propagateStep(
        { 'test/tally.test.js': TALLY_TEST },
        { 'test/tally.test.js': ['CloseTally'] },
        'one test',
      ),
      {
        phase: 'implement',
        write: { 'src/tally.js': TALLY_CODE },
        result: {
          phase: 'implement',
          files_changed: ['src/tally.js'],
          contested_tests: [],
          summary: 'closeTally',
        },
      },
      { phase: 'weed', result: { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' } },
    ]);
    const agent = ['--agent', 'replay', '--agent-script', script];
    const first = await runCli(['run', QUESTION_GOAL, ...agent], dir);
    expect(first.stdout).toContain('Starting with elicit');
    expect(first.code).toBe(5);
    const stopped = await readLedger(dir, QUESTION_SLUG);
    expect(stopped['terminal'].state).toBe('awaiting_input');
    const question = (stopped['questions'] as LooseJson[])[0]!;
    expect(first.stdout).toContain(`allium-loop answer ${QUESTION_SLUG} ${String(question['id'])}`);

    const resumedEarly = await runCli(['resume', QUESTION_SLUG, ...agent], dir);
    expect(resumedEarly.code).toBe(5);

    const answered = await runCli(
      ['answer', QUESTION_SLUG, String(question['id']), 'No, a closed tally stays closed.'],
      dir,
    );
    expect(answered.code).toBe(0);
    const resumed = await runCli(['resume', QUESTION_SLUG, ...agent], dir);
    expect(resumed.stdout).toContain('red-check: 1 new test(s) fail first');
    expect(resumed.code).toBe(0);
    const done = await readLedger(dir, QUESTION_SLUG);
    expect(done['terminal'].state).toBe('converged');
    expect((await readWitness(dir, QUESTION_SLUG))['verdict']).toBe('PASS');
    expect((done['questions'] as LooseJson[])[0]!['status']).toBe('applied');
    expect(await readFile(join(dir, 'specs/tally.allium'), 'utf8')).not.toContain('open question');
  });

  it('code-first: distill passes run until one finds nothing new', async () => {
    const dir = await makeProject({
      ...NEW_PROJECT,
      'src/tally.js': TALLY_CODE,
      'test/tally.test.js': TALLY_TEST,
    });
    const spec = SPEC_ANSWERED;
    const script = await writeScript(dir, [
      {
        phase: 'distill',
        write: { 'specs/tally.allium': spec },
        result: {
          phase: 'distill',
          spec_path: 'specs/tally.allium',
          open_questions: [],
          summary: 'captured CloseTally',
        },
      },
      propagateStep(
        {
          'test/capture.test.js': TALLY_TEST.replace(
            'closes an open tally',
            'captures closing an open tally',
          ),
        },
        { 'test/capture.test.js': ['CloseTally'] },
        'capture test',
      ),
      {
        phase: 'weed',
        result: { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' },
        repeat: true,
      },
      {
        phase: 'distill',
        result: {
          phase: 'distill',
          spec_path: 'specs/tally.allium',
          open_questions: [],
          summary: 'nothing new',
        },
      },
    ]);
    const run = await runCli(
      ['run', 'document how tallies work today', '--agent', 'replay', '--agent-script', script],
      dir,
    );
    expect(run.stdout).toContain('Starting with distill');
    // The engine counts the constructs the first pass wrote (never the record's word).
    expect(run.stdout).toMatch(/tick 1 · .* · distill new [1-9]/);
    expect(run.stdout).toMatch(/tick 2 · .* · distill new 0/);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('witness: PASS');
  });

  it('kill -9 of the supervisor mid-call, then resume in a fresh process: converges without re-running the phase', async () => {
    const dir = await makeProject({
      ...NEW_PROJECT,
      'specs/tally.allium': SPEC_ANSWERED,
      'src/tally.js': 'export function closeTally() {}\n',
      'test/tally.test.js': TALLY_TEST,
    });
    const script = await writeScript(dir, [
      {
        phase: 'weed',
        result: {
          phase: 'weed',
          verdict: 'dirty',
          divergences: [
            {
              subject: 'rule:CloseTally',
              classification: 'code-bug',
              spec: 'specs/tally.allium:7 closes the tally',
              code: 'src/tally.js:1 closeTally does nothing',
            },
          ],
          summary: 'one',
        },
      },
      {
        phase: 'implement',
        delayMs: 2500,
        write: { 'src/tally.js': TALLY_CODE },
        result: {
          phase: 'implement',
          files_changed: ['src/tally.js'],
          contested_tests: [],
          summary: 'fixed',
        },
      },
      { phase: 'weed', result: { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' } },
    ]);
    const slug = 'make-the-code-match-the-spec-again';
    const agent = ['--agent', 'replay', '--agent-script', script];
    const { child, done } = startCli(['run', 'make the code match the spec again', ...agent], dir);
    for (let i = 0; i < 1200; i += 1) {
      const events = await readJournal(dir, slug).catch(() => []);
      if (events.some((e) => e['type'] === 'phase_started' && e['phase'] === 'implement')) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGKILL');
    const killed = await done;
    expect(killed.signal).toBe('SIGKILL');
    // The orphaned agent finishes its scripted work and writes its result file while no supervisor runs.
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const resumed = await runCli(['resume', slug, ...agent], dir);
    expect(resumed.stdout).toContain('Took over the lease');
    expect(resumed.code).toBe(0);
    expect(await readFile(join(dir, 'src/tally.js'), 'utf8')).toBe(TALLY_CODE);
    const journal = await readJournal(dir, slug);
    // No call with a recorded outcome ran twice: every key ends once; the interrupted one was either accepted from
    // the result file its orphaned agent left, or re-run under the same key (replaying the same scripted step).
    const ended = journal.filter((e) => e['type'] === 'intent_ended').map((e) => e['key'] as string);
    expect(new Set(ended).size).toBe(ended.length);
    expect(ended.filter((key) => key.includes('/implement/'))).toEqual(['tick-2/implement/1']);
    const ledger = await readLedger(dir, slug);
    expect(ledger['terminal'].state).toBe('converged');
    expect((await readWitness(dir, slug))['verdict']).toBe('PASS');
    expect((ledger['intents'] as LooseJson[]).every((i) => i['outcome'] !== null)).toBe(true);
  });

  it('the demo converges with a red-check, an inner-loop round, a weed fix, slices and the integration pass', async () => {
    const run = await runCli(['demo'], process.cwd());
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('red-check: 3 new test(s) fail first');
    expect(run.stdout).toMatch(/\[cycle:entity-lifecycle:Book\] tick 1 · tests 5\/5 · weed dirty\(1\)/);
    // The test count of the run between the two implement rounds is printed before the second round starts.
    const lines = run.stdout.split('\n');
    const rounds = lines.flatMap((line, i) =>
      line === '[cycle:entity-lifecycle:Book] → Act: implement' ? [i] : [],
    );
    const between = lines.indexOf('    tests 4/5 after implement round 1');
    expect(rounds.length).toBeGreaterThanOrEqual(2);
    expect(between).toBeGreaterThan(rounds[0]!);
    expect(between).toBeLessThan(rounds[1]!);
    expect(lines.indexOf('    tests 5/5 after implement round 2')).toBeGreaterThan(rounds[1]!);
    expect(run.stdout).toMatch(/\[cycle:entity-lifecycle:Book\] tick 2 · tests 5\/5 · weed clean/);
    expect(run.stdout).toContain('[integration]');
    expect(run.stdout).toContain('converged after');
    // Convergence is declared on the witness: each slice's gate and the whole run's passed, records schema-valid.
    expect(run.stdout).toMatch(/\[integration\] witness: PASS/);
    const dir = /Demo project copied to (\S+) /.exec(run.stdout)?.[1] ?? '';
    const slug = 'add-loans-returns-and-overdue-notices-to-the';
    const witness = await readWitness(dir, slug);
    expect(witness['verdict']).toBe('PASS');
    expect(witness['record_path']).toBe(`.allium-loop/${slug}.witness.json`);
    expect((witness['checks'] as LooseJson[]).find((c) => c['name'] === 'no-test-weakened')?.['result']).toBe(
      'pass',
    );
    // The trace: one schema-valid line per tick of the run (its slices' ticks numbered on), phases with reasons.
    const trace = await readTrace(dir, slug);
    expect(trace.map((t) => t['tick'])).toEqual(trace.map((_, i) => i + 1));
    expect(trace.length).toBeGreaterThanOrEqual(4);
    expect(trace.at(-1)).toMatchObject({ weed: 'clean', tests: { failed: 0 } });
    expect((trace[0]!['phases'] as LooseJson[])[0]).toMatchObject({ name: 'propagate' });
  });
});

import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { withLease } from '../project/with-lease.js';
import { openStore } from '../run-goal.js';
import { answerQuestion } from './answer-question.js';
import { QUESTION_SLUG, recordBlockingQuestion } from './runs.test-helpers.js';

const SLUG = QUESTION_SLUG;
const ENV = {};
const clock = { now: () => Date.parse('2026-11-30T12:00:00Z') };

async function project(): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), 'answer-race-'));
  await recordBlockingQuestion(cwd, new Date(clock.now()));
  return cwd;
}

const answer = (cwd: string) =>
  answerQuestion({ cwd, env: ENV, slug: SLUG, questionId: 'q-1', answer: 'never', clock });

async function journalTypes(cwd: string): Promise<string[]> {
  const text = await readFile(join(cwd, '.allium-loop', `${SLUG}.events.ndjson`), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => (JSON.parse(line) as { type: string }).type);
}

describe('answer goes through the run’s lease', () => {
  it('while a live supervisor holds the run, answer is refused and writes nothing', async () => {
    const cwd = await project();
    const store = openStore(cwd, ENV);
    const before = await readFile(join(cwd, '.allium-loop', `${SLUG}.json`), 'utf8');
    await withLease(store, SLUG, undefined, async () => {
      await expect(answer(cwd)).rejects.toMatchObject({ code: 'ledger.lease_held' });
    });
    expect(await readFile(join(cwd, '.allium-loop', `${SLUG}.json`), 'utf8')).toBe(before);
    expect(await journalTypes(cwd)).not.toContain('question_answered');
  });

  it('racing a live supervisor that saves its own update, no update is lost', async () => {
    const cwd = await project();
    const store = openStore(cwd, ENV);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    // The supervisor: loads the ledger under its lease, works, then saves its copy whole (a tick went by and the
    // run stopped for the blocking question), as the loop does.
    const supervisor = withLease(store, SLUG, undefined, async (lease) => {
      const loaded = await store.load(SLUG);
      if (!loaded.ok) throw new Error('unreadable');
      held();
      await gate;
      await store.save(lease, {
        ...loaded.value.ledger,
        tick: loaded.value.ledger.tick + 1,
        status: 'terminal',
        terminal: {
          state: 'awaiting_input',
          reason: 'blocking_questions',
          detail: 'q-1 needs an answer',
          at: new Date(clock.now()).toISOString(),
        },
      });
    });
    await holding;
    // The user answers while the supervisor works: refused, nothing written to be overwritten.
    await expect(answer(cwd)).rejects.toMatchObject({ code: 'ledger.lease_held' });
    // Then keeps trying while the supervisor saves and lets go; every attempt either is refused or lands after.
    const attempts = (async () => {
      for (;;) {
        try {
          return await answer(cwd);
        } catch (error) {
          if ((error as { code?: string }).code !== 'ledger.lease_held') throw error;
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    })();
    release();
    await supervisor;
    await attempts;
    const loaded = await store.load(SLUG);
    if (!loaded.ok) throw new Error('unreadable');
    const ledger = loaded.value.ledger;
    // The supervisor's update and the answer are both there.
    expect(ledger.tick).toBe(1);
    expect(ledger.terminal?.state).toBe('awaiting_input');
    expect(ledger.questions[0]).toMatchObject({ id: 'q-1', status: 'answered', answer: 'never' });
    expect((await journalTypes(cwd)).filter((type) => type === 'question_answered')).toHaveLength(1);
  });
});

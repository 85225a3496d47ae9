import { createLedger } from '@allium-loop/ledger';
import { openStore } from '../run-goal.js';

/** The slug of the run {@link recordBlockingQuestion} records. */
export const QUESTION_SLUG = 'close-tallies';

/**
 * Records, in the project's store, a spec-loop run of {@link QUESTION_SLUG} with one open blocking question `q-1`
 * ("May a closed tally be reopened?"), as a run stopped for it would leave it.
 */
export async function recordBlockingQuestion(cwd: string, now = new Date()): Promise<void> {
  const store = openStore(cwd, {});
  const { lease } = await store.acquire(QUESTION_SLUG);
  await store.save(lease, {
    ...createLedger({ goal: 'close tallies', slug: QUESTION_SLUG, mode: 'spec', now }),
    questions: [
      {
        id: 'q-1',
        text: 'May a closed tally be reopened?',
        classification: 'blocking',
        assumption: null,
        answer: null,
        status: 'open',
        raisedAtTick: 1,
        phase: 'weed',
      },
    ],
  });
  await store.release(lease);
}

import type { Clock } from '../driver/loop-ports.js';
import { loadRecordedRun, openStore, RunError } from '../run-goal.js';
import { withLease } from '../project/with-lease.js';
import { canReopen } from './reopen-run.js';

/** What {@link answerQuestion} needs. */
export interface AnswerRequest {
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly slug: string;
  readonly questionId: string;
  readonly answer: string;
  readonly clock: Clock;
}

/** An answer recorded: `resume` continues the run and the next tend writes it into the spec. */
export interface AnswerOutcome {
  readonly slug: string;
  readonly questionId: string;
}

/**
 * Records the user's answer to a question of a run, under the run's lease (so it never races a supervisor): the
 * question becomes `answered` and a `question_answered` event is journaled; the next `resume` writes it into the
 * spec through tend. Refuses clearly — never records an answer that would be lost:
 * - `run.not_found` / the store's corrupt-ledger error when the run cannot be read;
 * - `ledger.lease_held` while a live supervisor drives the run (answer at its prompt, or after it stops);
 * - `run.no_such_question` for an unknown id, `run.question_settled` for one already written into the spec;
 * - `run.ended` for a run that ended for good (converged, max_ticks, no_progress, budget_exhausted): resume would
 *   not reopen it, so the answer could never be applied; start a new run for it instead.
 */
export async function answerQuestion(request: AnswerRequest): Promise<AnswerOutcome> {
  const store = openStore(request.cwd, request.env);
  const { slug, questionId, answer } = request;
  return withLease(store, slug, undefined, async (lease) => {
    const ledger = await loadRecordedRun(store, slug, request.cwd);
    const question = ledger.questions.find((q) => q.id === questionId);
    if (question === undefined) {
      const open = ledger.questions.filter((q) => q.status === 'open').map((q) => `${q.id} (${q.text})`);
      throw new RunError(`Run ${slug} has no question ${questionId}.`, {
        code: 'run.no_such_question',
        context: { slug, questionId },
        hint: open.length > 0 ? `Open: ${open.join('; ')}` : `Run ${slug} has no open question.`,
      });
    }
    if (question.status === 'applied') {
      throw new RunError(
        `Question ${questionId} of run ${slug} was already answered and written into the spec.`,
        {
          code: 'run.question_settled',
          context: { slug, questionId },
          hint: 'Edit the spec by hand, or start a new run to change that decision.',
        },
      );
    }
    const answered = {
      ...ledger,
      questions: ledger.questions.map((q) =>
        q.id === questionId ? { ...q, answer, status: 'answered' as const } : q,
      ),
    };
    if (ledger.terminal !== null) {
      if (!canReopen(answered)) {
        throw new RunError(
          `Run ${slug} ended ${ledger.terminal.state} (${ledger.terminal.detail}); an answer cannot be applied to it.`,
          {
            code: 'run.ended',
            context: { slug, questionId, state: ledger.terminal.state },
            hint: `Nothing was recorded. Start a new run with the answer in its goal, e.g. allium-loop run "<goal>; ${question.text} ${answer}".`,
          },
        );
      }
    }
    const at = new Date(request.clock.now()).toISOString();
    await store.append(lease, [{ type: 'question_answered', at, id: questionId, answer }]);
    await store.save(lease, answered);
    return { slug, questionId };
  });
}

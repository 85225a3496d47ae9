import type { OpenQuestion } from './analyze-specs.js';

/**
 * The key that identifies an open question across ticks, files and runs: its text lower-cased with every run of
 * characters other than letters and digits turned into one space. Quotes, punctuation and spacing do not matter.
 */
export function questionKey(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

/** A spec's open questions split by the one classification rule (see {@link classifyOpenQuestions}). */
export interface ClassifiedQuestions {
  readonly blocking: readonly OpenQuestion[];
  readonly parked: readonly OpenQuestion[];
}

/**
 * The one classification rule for the open questions of a spec, used by the loop's measurement and by
 * `allium-loop verify` alike: a question is **blocking** only when someone classified it so and it is still
 * unanswered (`blockingTexts`, matched by {@link questionKey}); every other question — parked by a phase, or
 * written into the spec by hand and classified by nobody — is **parked**. Upstream Allium keeps parked questions
 * in the spec; blocking ones are escalated before dependent work and recorded as blocking in the ledger.
 */
export function classifyOpenQuestions(
  questions: readonly OpenQuestion[],
  blockingTexts: Iterable<string>,
): ClassifiedQuestions {
  const blocking = new Set([...blockingTexts].map(questionKey));
  return {
    blocking: questions.filter((question) => blocking.has(questionKey(question.text))),
    parked: questions.filter((question) => !blocking.has(questionKey(question.text))),
  };
}

import { createHash } from 'node:crypto';
import { questionKey } from '@allium-loop/allium';
import type { Ledger } from '@allium-loop/ledger';
import type { PhaseContext } from '@allium-loop/workers';
import type { LoopMode } from '../decide/loop-state.js';
import type { PhaseRequest } from '../driver/loop-ports.js';
import type { ProjectFiles } from './project-files.js';

/** A stable id for an open question: its normalised text, hashed, so the same question keeps its id across ticks. */
export function questionId(text: string): string {
  return `q-${createHash('sha256').update(questionKey(text)).digest('hex').slice(0, 8)}`;
}

/** What {@link buildPhaseContext} reads. */
export interface PhaseContextInput {
  readonly request: PhaseRequest;
  readonly cwd: string;
  readonly slug: string;
  readonly goal: string;
  readonly mode: LoopMode;
  readonly ledger: Ledger;
  readonly files: ProjectFiles;
  readonly structural: readonly { readonly file: string; readonly line: number; readonly message: string }[];
  readonly timeoutMs: number;
}

/** Builds a worker's context from the loop's focus and the ledger: the brief each phase's prompt is made from. */
export function buildPhaseContext(input: PhaseContextInput): PhaseContext {
  const { request, ledger } = input;
  const focus = request.focus;
  const divergences = (focus.divergences ?? []).map((d) => ({
    construct: d.construct,
    classification: d.classification,
    description: d.detail,
  }));
  const notes = [
    ...(focus.reasons ?? []),
    ...(focus.vacuous !== undefined && focus.vacuous.length > 0
      ? [
          `these new tests were already green before implementing (vacuous or already covered); replace them: ${focus.vacuous.join(', ')}`,
        ]
      : []),
    ...(focus.slice?.integration === true
      ? [
          'integration pass: write cross-slice tests over the data-flow chains between the slices, and weed the whole spec',
          ...(focus.slice.chains ?? []).map((chain) => `chain to test end to end: ${chain.join(' → ')}`),
        ]
      : []),
  ];
  const answered = ledger.questions.filter((q) => (focus.answered ?? []).includes(q.id));
  const tendLines = [
    ...answered.map(
      (q) =>
        `Write the answer to the open question "${q.text}" into the spec (and remove that open question): ${q.answer ?? ''}`,
    ),
    ...divergences.map((d) => `Resolve divergence on ${d.construct} (${d.classification}): ${d.description}`),
    ...(focus.reasons ?? []),
  ];
  return {
    cwd: input.cwd,
    slug: phaseSlug(input.slug, request),
    tick: request.tick,
    goal: input.goal,
    mode: input.mode,
    ...(focus.slice === undefined || focus.slice.integration
      ? {}
      : { slice: { name: focus.slice.id, constructs: focus.slice.constructs } }),
    paths: { spec: input.files.spec, tests: input.files.tests, code: input.files.code },
    previousVerdict: {
      failingTests: (focus.failing ?? []).map((name) => ({ name })),
      divergences,
      structuralErrors: input.structural,
      ...(notes.length > 0 ? { notes } : {}),
    },
    parkedQuestions: ledger.questions
      .filter((q) => q.classification === 'parked' && q.status === 'open')
      .map((q) => ({ text: q.text, assumption: q.assumption ?? '' })),
    ...(request.phase === 'tend'
      ? {
          tendRequest: {
            request:
              tendLines.length > 0 ? tendLines.join('\n') : `Change the spec for the goal: ${input.goal}`,
          },
        }
      : {}),
    protectedTests: ledger.protectedTests,
    timeoutMs: input.timeoutMs,
    callKey: request.key,
    ...(request.budgetUsd === undefined ? {} : { budgetUsd: request.budgetUsd }),
    signal: request.signal,
  };
}

/** The slug under which a phase's result file lives: slices get their own folder so their results never mix. */
export function phaseSlug(slug: string, request: PhaseRequest): string {
  const slice = request.focus.slice;
  return slice === undefined ? slug : `${slug}/slices/${slice.id.replace(/[^\w.-]+/g, '-')}`;
}

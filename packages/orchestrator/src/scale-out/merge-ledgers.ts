import { normaliseQuestion, type RollUp } from '@allium-loop/decomposer';
import { parseLedger, type Ledger, type Question, type SubGoal } from '@allium-loop/ledger';
import { readLoopState, specRecord } from '../driver/ledger-sync.js';
import { rollUpSlices } from '../driver/slice-roll-up.js';
import { questionId } from '../project/phase-context.js';
import { SLICE_RUN_KIND, sliceRunMark } from './slice-run.js';
import { ScaleOutError, type StoredPlan } from './stored-plan.js';

/** One slice ledger handed to {@link mergeSliceLedgers}, with where it came from (for error messages). */
export interface SliceLedgerInput {
  readonly source: string;
  readonly ledger: Ledger;
}

/** How one planned slice stands in the merged ledger. */
export interface MergedSlice {
  readonly id: string;
  /** The ledger it came from; absent when no ledger of the slice was given. */
  readonly source?: string;
  /**
   * `ended`: the slice loop reached a terminal state; `interrupted`: its ledger was left mid-run (the job died or
   * was cancelled before the slice ended); `missing`: no ledger for it.
   */
  readonly condition: 'ended' | 'interrupted' | 'missing';
}

/** The merged ledger, its roll-up (the same `rollUpSlices` a single-process run reports), and each slice's condition. */
export interface MergedLedgers {
  readonly ledger: Ledger;
  readonly rollUp: RollUp;
  readonly slices: readonly MergedSlice[];
}

const QUESTION_RANK: Readonly<Record<Question['status'], number>> = { open: 0, answered: 1, applied: 2 };

/**
 * Rolls the ledgers of a plan's slice runs (one per CI job) up into one ledger of the goal, as a single-process
 * run would have left it: sub-goals in plan order (a slice without a ledger stays `pending`), every slice's loop
 * state, questions deduplicated (by id and by normalised text; the furthest status wins: applied, answered, open),
 * the spec's open questions of the plan as parked questions, spending summed, intents and checkpoints kept.
 * Refuses (a {@link ScaleOutError}) a ledger that is not a slice run, is of another plan, or repeats a slice.
 * Pure: it reads and returns values only.
 */
export function mergeSliceLedgers(
  plan: StoredPlan,
  inputs: readonly SliceLedgerInput[],
  at: Date,
): MergedLedgers {
  if (inputs.length === 0)
    throw new ScaleOutError('No slice ledgers to merge.', {
      code: 'scale_out.no_ledgers',
      hint: 'Pass the ledgers the slice jobs left (.allium-loop/<slug>.json of each job).',
    });
  const bySlice = new Map<string, SliceLedgerInput>();
  for (const input of inputs) {
    const mark = sliceRunMark(input.ledger);
    if (mark === undefined)
      throw new ScaleOutError(`${input.source} is not the ledger of a slice run.`, {
        code: 'scale_out.not_a_slice_ledger',
        context: { source: input.source },
        hint: "Slice ledgers are written by 'allium-loop run --slice <id> --plan <file>'.",
      });
    if (mark.plan !== plan.id)
      throw new ScaleOutError(
        `${input.source} ran slice ${mark.slice.id} of plan ${mark.plan}, not of plan ${plan.id}.`,
        {
          code: 'scale_out.plan_mismatch',
          context: { source: input.source, plan: mark.plan, expected: plan.id },
          hint: 'Merge the ledgers of one plan with that plan file.',
        },
      );
    if (!plan.slices.some((slice) => slice.id === mark.slice.id))
      throw new ScaleOutError(`${input.source} ran slice ${mark.slice.id}, which the plan does not have.`, {
        code: 'scale_out.unknown_slice',
        context: { source: input.source, slice: mark.slice.id },
      });
    const other = bySlice.get(mark.slice.id);
    if (other !== undefined)
      throw new ScaleOutError(
        `Two ledgers for slice ${mark.slice.id}: ${other.source} and ${input.source}.`,
        {
          code: 'scale_out.duplicate_slice',
          context: { slice: mark.slice.id, sources: [other.source, input.source] },
          hint: 'Pass one ledger per slice: the one of its latest job.',
        },
      );
    bySlice.set(mark.slice.id, input);
  }

  const ordered = plan.slices.flatMap((slice) => {
    const input = bySlice.get(slice.id);
    return input === undefined ? [] : [input];
  });
  const first = ordered[0]!.ledger;
  const subGoals: SubGoal[] = plan.slices.map((slice) => {
    const own = bySlice.get(slice.id)?.ledger.subGoals.find((goal) => goal.id === slice.id);
    return (
      own ?? {
        id: slice.id,
        slice: { constructs: [...slice.constructs] },
        dependsOn: [...slice.dependsOn],
        status: 'pending',
        report: null,
      }
    );
  });
  const slices: MergedSlice[] = plan.slices.map((slice) => {
    const input = bySlice.get(slice.id);
    if (input === undefined) return { id: slice.id, condition: 'missing' };
    const ended = readLoopState(input.ledger, slice.id)?.terminal !== undefined;
    return { id: slice.id, source: input.source, condition: ended ? 'ended' : 'interrupted' };
  });

  // Each slice ledger contributes its own slice's loop state and last call only.
  type SpecState = ReturnType<typeof specRecord>;
  const sliceStates: NonNullable<SpecState['slices']> = {};
  const lastCalls: NonNullable<SpecState['lastCalls']> = {};
  for (const { ledger } of ordered) {
    const id = sliceRunMark(ledger)!.slice.id;
    const record = specRecord(ledger);
    const own = record.slices?.[id];
    if (own !== undefined) sliceStates[id] = own;
    const call = record.lastCalls?.[id];
    if (call !== undefined) lastCalls[id] = call;
  }

  const stamp = at.toISOString();
  const spent = ordered.reduce(
    (sum, { ledger }) => ({
      ticks: sum.ticks + ledger.spent.ticks,
      agentCalls: sum.agentCalls + ledger.spent.agentCalls,
      wallMs: sum.wallMs + ledger.spent.wallMs,
      usd: ledger.spent.usd === null ? sum.usd : (sum.usd ?? 0) + ledger.spent.usd,
      usdUnknownCalls: sum.usdUnknownCalls + ledger.spent.usdUnknownCalls,
      tokens: {
        input: sum.tokens.input + ledger.spent.tokens.input,
        output: sum.tokens.output + ledger.spent.tokens.output,
        cacheRead: sum.tokens.cacheRead + ledger.spent.tokens.cacheRead,
        cacheWrite: sum.tokens.cacheWrite + ledger.spent.tokens.cacheWrite,
      },
    }),
    {
      ...first.spent,
      ticks: 0,
      agentCalls: 0,
      wallMs: 0,
      usd: null as number | null,
      usdUnknownCalls: 0,
      tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    },
  );

  const draft: Ledger = {
    ...first,
    entry: {
      path: 'weed',
      mode: 'spec-first',
      reason: `merged from ${String(ordered.length)} slice ledger(s) of plan ${plan.id}`,
      overridden: false,
    },
    status: 'running',
    terminal: null,
    createdAt: ordered.map(({ ledger }) => ledger.createdAt).sort()[0]!,
    updatedAt: stamp,
    spent: { ...spent, usd: spent.usd === null ? null : Math.round(spent.usd * 1e6) / 1e6 },
    tick: Math.max(...ordered.map(({ ledger }) => ledger.tick)),
    activeInnerLoop: null,
    verdicts: [],
    questions: mergeQuestions(
      ordered.flatMap(({ ledger }) => ledger.questions),
      plan.questions,
    ),
    subGoals,
    protectedTests: [
      ...new Map(
        ordered.flatMap(({ ledger }) => ledger.protectedTests).map((test) => [test.path, test]),
      ).values(),
    ],
    intents: ordered.flatMap(({ ledger }) => ledger.intents),
    checkpoints: ordered.flatMap(({ ledger }) => ledger.checkpoints),
    history: [
      // The slices' marks are kept under another kind: the merged ledger is no slice run of its own.
      ...ordered.flatMap(({ ledger }) =>
        ledger.history.map((entry) =>
          entry.kind === SLICE_RUN_KIND ? { ...entry, kind: `${SLICE_RUN_KIND}.merged` } : entry,
        ),
      ),
      {
        at: stamp,
        kind: 'scale_out.merge',
        message: `merged ${String(ordered.length)} of ${String(plan.slices.length)} slice ledger(s) of plan ${plan.id}`,
        data: { plan: plan.id, sources: ordered.map((input) => input.source) },
      },
    ],
    modeState: { ...specRecord(first), slices: sliceStates, lastCalls },
  };
  const rolled = rollUpSlices(draft, (id) => readLoopState(draft, id));
  const stopped = slices.find((slice) => {
    const state = readLoopState(draft, slice.id)?.terminal?.state;
    return state !== undefined && state !== 'converged';
  });
  const stoppedState = stopped === undefined ? undefined : readLoopState(draft, stopped.id)?.terminal;
  const terminal = rolled.converged
    ? { state: 'converged' as const, detail: 'every slice and the integration pass converged' }
    : stoppedState === undefined
      ? undefined
      : { state: stoppedState.state, detail: `slice ${stopped!.id}: ${stoppedState.reason}` };
  const merged: Ledger =
    terminal === undefined
      ? draft
      : {
          ...draft,
          status: 'terminal',
          terminal: { state: terminal.state, reason: terminal.state, detail: terminal.detail, at: stamp },
        };
  const checked = parseLedger(JSON.parse(JSON.stringify(merged)));
  if (!checked.ok)
    throw new ScaleOutError(`The merged ledger is not valid: ${checked.issues.join('; ')}.`, {
      code: 'scale_out.merge_invalid',
      context: { issues: [...checked.issues] },
    });
  return { ledger: checked.value, rollUp: rolled, slices };
}

/**
 * The questions of every slice, one per question: the same id or the same normalised text is one question, and
 * the furthest status wins. The plan's spec questions join as parked ones when no slice recorded them.
 */
function mergeQuestions(questions: readonly Question[], specQuestions: readonly string[]): Question[] {
  const byKey = new Map<string, Question>();
  const keyOf = new Map<string, string>();
  const add = (question: Question): void => {
    const key = keyOf.get(question.id) ?? normaliseQuestion(question.text);
    const known = byKey.get(key);
    keyOf.set(question.id, key);
    if (known === undefined) {
      byKey.set(key, question);
      return;
    }
    const better = QUESTION_RANK[question.status] > QUESTION_RANK[known.status] ? question : known;
    byKey.set(key, { ...better, raisedAtTick: Math.min(known.raisedAtTick, question.raisedAtTick) });
  };
  for (const question of questions) add(question);
  for (const text of specQuestions) {
    const key = normaliseQuestion(text);
    if (key === '' || byKey.has(key)) continue;
    byKey.set(key, {
      id: questionId(text),
      text,
      classification: 'parked',
      assumption: null,
      answer: null,
      status: 'open',
      raisedAtTick: 0,
      phase: 'plan',
    });
  }
  return [...byKey.values()];
}

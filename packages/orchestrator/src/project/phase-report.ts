import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ledger } from '@allium-loop/ledger';
import {
  namedFiles,
  parseWorkerResult,
  resultFilePath,
  type WorkerOutcome,
  type WorkerPhase,
} from '@allium-loop/workers';
import type { Divergence } from '../decide/loop-state.js';
import type { PhaseReport, PhaseRequest } from '../driver/loop-ports.js';
import { phaseSlug, questionId } from './phase-context.js';

const DIVERGENCE_KIND: Readonly<Record<string, Divergence['classification']>> = {
  'spec-bug': 'spec-bug',
  'code-bug': 'code-bug',
  aspirational: 'aspirational',
  'intentional-gap': 'intentional-gap',
};

/** What a worker's outcome tells the driver: the observation for `decide`, the questions, spend and events. */
export function toPhaseReport(
  outcome: WorkerOutcome,
  request: PhaseRequest,
  specChanged: boolean,
  ledger: Ledger,
  durationMs: number,
): PhaseReport {
  const base = {
    events: outcome.events.map((event) => ({ ...event }) as PhaseReport['events'][number]),
    questions: [] as PhaseReport['questions'],
    costKnown: outcome.costUsd !== undefined,
    durationMs,
    ...(outcome.agent.tokens === undefined ? {} : { tokens: outcome.agent.tokens }),
    protectedTests: outcome.protectedTests,
    ...(outcome.agent.outcome === 'rate_limited'
      ? {
          rateLimited:
            outcome.agent.rateLimitResetAt === undefined ? {} : { resetAt: outcome.agent.rateLimitResetAt },
        }
      : {}),
    ...(outcome.agent.authFailure === true
      ? { stopReason: `the agent's credentials were refused: ${outcome.agent.detail ?? 'HTTP 401'}` }
      : {}),
  };
  const costUsd = outcome.costUsd;
  const observation = {
    kind: 'phase_done' as const,
    phase: request.phase,
    ...(costUsd === undefined ? {} : { costUsd }),
  };
  if (outcome.status === 'failed') {
    return {
      ...base,
      observation: { ...observation, ok: false, detail: `${outcome.reason}: ${outcome.detail}` },
    };
  }
  return { ...base, ...describeResult(outcome, request, specChanged, ledger, observation) };
}

type DescribedResult = Pick<PhaseReport, 'observation' | 'questions' | 'redCheck' | 'appliedQuestions'>;
type DoneObservation = { kind: 'phase_done'; phase: PhaseRequest['phase']; costUsd?: number };
type OkOutcome = Extract<WorkerOutcome, { status: 'ok' }>;

function describeResult(
  outcome: OkOutcome,
  request: PhaseRequest,
  specChanged: boolean,
  ledger: Ledger,
  observation: DoneObservation,
): DescribedResult {
  const result = outcome.result;
  switch (result.phase) {
    case 'elicit':
    case 'tend':
    case 'distill':
      return describeGather(result, request, specChanged, ledger, observation);
    case 'propagate':
      return describePropagate(outcome, observation);
    case 'implement':
      return {
        observation: { ...observation, ok: true, contested: result.contestedTests.map((c) => c.test) },
        questions: [],
      };
    case 'weed':
      return {
        observation: {
          ...observation,
          ok: true,
          divergences: result.divergences.map((d) => ({
            construct: d.construct,
            classification: DIVERGENCE_KIND[d.classification] ?? 'code-bug',
            detail: d.description,
          })),
        },
        questions: [],
      };
  }
}

/** A gather phase: the questions it raised (blocking ones not yet settled stop the loop), parked assumptions. */
function describeGather(
  result: Extract<OkOutcome['result'], { phase: 'elicit' | 'tend' | 'distill' }>,
  request: PhaseRequest,
  specChanged: boolean,
  ledger: Ledger,
  observation: DoneObservation,
): DescribedResult {
  const questions = result.openQuestions.map((q) => ({
    id: questionId(q.text),
    text: q.text,
    classification: q.classification,
    assumption: q.classification === 'parked' ? q.assumption : null,
    answer: null,
    status: 'open' as const,
  }));
  const settled = new Set(ledger.questions.filter((q) => q.status !== 'open').map((q) => q.id));
  const blocking = questions
    .filter((q) => q.classification === 'blocking' && !settled.has(q.id))
    .map((q) => q.id);
  return {
    observation: {
      ...observation,
      ok: true,
      specChanged,
      blocking,
      parked: questions.filter((q) => q.classification === 'parked').map((q) => q.text),
      ...(result.phase === 'distill' ? { distillNew: result.newFindings } : {}),
    },
    questions,
    ...(result.phase === 'tend' && request.focus.answered !== undefined
      ? { appliedQuestions: request.focus.answered }
      : {}),
  };
}

/** Propagate: its new tests, and the red-check the worker ran on them (red or diverging tests count as failing). */
function describePropagate(outcome: OkOutcome, observation: DoneObservation): DescribedResult {
  const verdicts = outcome.redCheck?.verdicts ?? [];
  const newTests = verdicts.map((v) => v.test);
  const failing = verdicts
    .filter((v) => v.classification === 'red' || v.classification === 'diverges')
    .map((v) => v.test);
  return {
    observation: { ...observation, ok: true, newTests },
    questions: [],
    redCheck: { passing: newTests.filter((t) => !failing.includes(t)), failing },
  };
}

/** Accepts a result file an interrupted call left, when it parses and every file it names exists. */
export async function reconcileResult(
  cwd: string,
  request: PhaseRequest,
  ledger: Ledger,
): Promise<PhaseReport | undefined> {
  const file = join(
    cwd,
    resultFilePath(phaseSlug(ledger.slug, request), request.tick, request.phase as WorkerPhase),
  );
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return undefined;
  const parsed = parseWorkerResult(request.phase as WorkerPhase, text);
  if (!parsed.ok) return undefined;
  for (const path of namedFiles(parsed.value)) {
    const info = await stat(join(cwd, path)).catch(() => undefined);
    if (info === undefined || info.size === 0) return undefined;
  }
  const outcome = {
    status: 'ok',
    phase: request.phase,
    result: parsed.value,
    agent: { outcome: 'ok', exitCode: 0, signal: null, durationMs: 0, transcriptPath: '' },
    resultFile: file,
    promptBytes: 0,
    violations: [],
    reverts: [],
    failures: [],
    protectedTests: ledger.protectedTests,
    events: [],
  } as unknown as Extract<WorkerOutcome, { status: 'ok' }>;
  return toPhaseReport(outcome, request, true, ledger, 0);
}

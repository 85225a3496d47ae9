import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Ledger } from '@allium-loop/ledger';
import {
  loopRecordPath,
  namedFiles,
  parseLegacyResult,
  parseLoopRecord,
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
      return describeGather(outcome, result, request, specChanged, ledger, observation);
    case 'propagate':
      return describePropagate(outcome, observation);
    case 'implement':
      return {
        observation: { ...observation, ok: true, contested: result.contested_tests.map((c) => c.test) },
        questions: [],
      };
    case 'weed':
      return {
        observation: {
          ...observation,
          ok: true,
          divergences: result.divergences.map((d) => ({
            construct: d.subject,
            classification: DIVERGENCE_KIND[d.classification] ?? 'code-bug',
            detail: `spec: ${d.spec}; code: ${d.code}`,
          })),
        },
        questions: [],
      };
  }
}

/** A gather phase: the questions it raised (blocking ones not yet settled stop the loop), parked assumptions. */
function describeGather(
  outcome: OkOutcome,
  result: Extract<OkOutcome['result'], { phase: 'elicit' | 'tend' | 'distill' }>,
  request: PhaseRequest,
  specChanged: boolean,
  ledger: Ledger,
  observation: DoneObservation,
): DescribedResult {
  // The record lists the questions (upstream: strings); the engine-side record classifies them. A question nobody
  // classified is parked, as the spec keeps it.
  const claims = new Map((outcome.loopRecord?.open_questions ?? []).map((q) => [questionId(q.text), q]));
  const questions = (result.open_questions ?? []).map((text) => {
    const claim = claims.get(questionId(text));
    return {
      id: questionId(text),
      text,
      classification: claim?.classification ?? ('parked' as const),
      assumption: claim === undefined ? null : claim.classification === 'parked' ? claim.assumption : null,
      answer: null,
      status: 'open' as const,
    };
  });
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
      ...(result.phase === 'distill' ? { distillNew: outcome.findings ?? 1 } : {}),
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
  const r = outcome.reconciliation;
  const reconciliation =
    r === undefined
      ? {}
      : {
          reconciliation: {
            line: r.line,
            obligations: r.obligations,
            covered: r.covered,
            uncovered: r.uncovered.map((u) => (u.reason === undefined ? { id: u.id } : { ...u })),
          },
        };
  return {
    observation: { ...observation, ok: true, newTests, ...reconciliation },
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
  const current = parseWorkerResult(request.phase as WorkerPhase, text);
  // A call interrupted under allium-loop 0.1.0 left its own record: translated where it can be.
  const legacy = current.ok ? undefined : parseLegacyResult(request.phase as WorkerPhase, text);
  const parsed = current.ok
    ? current
    : legacy === undefined
      ? undefined
      : { ok: true as const, value: legacy };
  if (parsed === undefined) return undefined;
  const loopText = await readFile(loopRecordPath(file), 'utf8').catch(() => undefined);
  const loop = loopText === undefined ? undefined : parseLoopRecord(loopText);
  if (loop !== undefined && !loop.ok) return undefined;
  for (const path of namedFiles(parsed.value)) {
    const info = await stat(join(cwd, path)).catch(() => undefined);
    if (info === undefined || info.size === 0) return undefined;
  }
  const outcome = {
    status: 'ok',
    phase: request.phase,
    result: parsed.value,
    ...(loop === undefined ? {} : { loopRecord: loop.value }),
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

import type { AgentRunResult } from '@allium-loop/agents';
import { writeFileAtomic } from '@allium-loop/ledger';
import { checkHarness } from '@allium-loop/verify';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { assemblePrompt, type PromptSpec } from './assemble-prompt.js';
import { applyReverts, type RevertOutcome } from './apply-reverts.js';
import {
  checkObligationClaims,
  type ObligationClaimTest,
  type ObligationReconciliation,
} from '@allium-loop/allium';
import {
  checkClaims,
  declaredCoverage,
  generatedTestPaths,
  sliceObligations,
  namedFiles,
  obligationClaimTests,
  significantChanges,
  type ClaimFailure,
} from './check-claims.js';
import { isAbsolute, relative } from 'node:path';
import {
  detectViolations,
  type AllowedTestChange,
  type GuardViolation,
  type ProtectedTest,
  type WorkspaceSnapshot,
} from './detect-violations.js';
import { parseLoopRecord, parseWorkerResult } from './parse-result.js';
import { findPrintedRecord } from './printed-record.js';
import { loopRecordPath } from './result-file-path.js';
import type { PhaseContext } from './phase-context.js';
import { mergeProtectedTests, recordProtectedTests } from './protect-tests.js';
import { classifyRedCheck, type RedCheckReport } from './red-check.js';
import type { LoopRecord, PhaseResult, PropagateResult } from './result-schemas.js';
import { sha256, takeSnapshot } from './take-snapshot.js';
import { describeViolation } from './describe-violation.js';
import type { WorkerPhase } from './worker-phase.js';
import type { ConstructDiff, ObservedTestRun, SpecReading, SpecSource, WorkerDeps } from './worker-ports.js';
import type { WorkerEvent, WorkerOutcome } from './worker-types.js';

function specSources(snapshot: WorkspaceSnapshot): SpecSource[] {
  return [...snapshot.spec].map(([path, file]) => ({ path, text: file.text }));
}

async function missingOrEmpty(cwd: string, paths: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const path of new Set(paths)) {
    const info = await stat(join(cwd, path)).catch(() => undefined);
    if (info === undefined || !info.isFile() || info.size === 0) missing.push(path);
  }
  return missing;
}

async function readSources(cwd: string, paths: readonly string[]): Promise<Map<string, string>> {
  const sources = new Map<string, string>();
  for (const path of paths) {
    const text = await readFile(join(cwd, path), 'utf8').catch(() => undefined);
    if (text !== undefined) sources.set(path, text);
  }
  return sources;
}

async function readResultText(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch(() => undefined);
}

async function runEachTestFile(
  deps: WorkerDeps,
  cwd: string,
  result: PropagateResult,
): Promise<Map<string, ObservedTestRun>> {
  const runs = new Map<string, ObservedTestRun>();
  for (const path of generatedTestPaths(result))
    runs.set(path, await deps.tests.runFiles({ cwd, files: [path] }));
  return runs;
}

function violationEvents(
  violations: readonly GuardViolation[],
  reverts: readonly RevertOutcome[],
): WorkerEvent[] {
  return violations.map((violation) => {
    const path = 'path' in violation ? violation.path : undefined;
    const reverted =
      path === undefined
        ? reverts.length > 0 && reverts.every((r) => r.applied)
        : reverts.some((r) => r.action.path === path && r.applied);
    return {
      type: 'violation',
      kind: violation.kind,
      ...(path === undefined ? {} : { path }),
      detail: describeViolation(violation),
      reverted,
    };
  });
}

function allowedEvents(phase: WorkerPhase, observed: PhaseObservation): WorkerEvent[] {
  return observed.allowed.map((change) => ({
    type: 'note',
    message: `test change allowed by allowTestChanges in allium-loop.yaml: ${change.path}: ${change.detail}`,
    data: { phase, reason: 'test_change_allowed', path: change.path },
  }));
}

function printedEvents(phase: WorkerPhase, observed: PhaseObservation): WorkerEvent[] {
  if (observed.resultSource !== 'printed') return [];
  return [
    {
      type: 'note',
      message: `the ${phase} record was read from the agent's final message and written to ${observed.resultFile}`,
      data: { phase, reason: 'record_printed' },
    },
  ];
}

/** What the engine observed around the agent call. */
interface PhaseObservation {
  readonly agent: AgentRunResult;
  readonly prompt: string;
  readonly resultFile: string;
  readonly specBefore: SpecReading;
  readonly specAfter: SpecReading;
  readonly diff: ConstructDiff;
  readonly violations: readonly GuardViolation[];
  readonly reverts: readonly RevertOutcome[];
  /** Test weakenings the user allowed (`allowTestChanges`), journaled as notes. */
  readonly allowed: readonly AllowedTestChange[];
  /**
   * The result file's text as the agent left it, read before any revert; else the record the agent printed in its
   * final message, which the engine wrote to the result file.
   */
  readonly resultText: string | undefined;
  /** Where the record came from: the result file, or the agent's final message (`printed`). */
  readonly resultSource: 'file' | 'printed' | undefined;
  /** The engine-side record's text (`<tick>-<phase>.loop.json`), when the agent wrote one. */
  readonly loopText: string | undefined;
}

interface Verification<P extends WorkerPhase> {
  readonly failures: ClaimFailure[];
  readonly result?: PhaseResult<P>;
  readonly testRuns?: Map<string, ObservedTestRun>;
  readonly reconciliation?: ObligationReconciliation;
  readonly loopRecord?: LoopRecord;
}

// The test files a propagate result lists; none when the agent wrote no valid result.
function listedTestFiles(resultText: string | undefined): string[] {
  if (resultText === undefined) return [];
  const parsed = parseWorkerResult('propagate', resultText);
  return parsed.ok ? generatedTestPaths(parsed.value) : [];
}

async function callAgent(phase: WorkerPhase, context: PhaseContext, deps: WorkerDeps, spec: PromptSpec) {
  const { prompt, resultFile } = assemblePrompt(phase, context, spec);
  const resultPath = join(context.cwd, resultFile);
  await mkdir(dirname(resultPath), { recursive: true });
  // A result left by an earlier attempt must never be read as this one's.
  await rm(resultPath, { force: true });
  await rm(join(context.cwd, loopRecordPath(resultFile)), { force: true });
  const agent = await deps.agent.run({
    prompt,
    cwd: context.cwd,
    phase,
    resultFile: resultPath,
    timeoutMs: context.timeoutMs,
    ...(context.callKey === undefined ? {} : { callKey: context.callKey }),
    ...(context.budgetUsd === undefined ? {} : { budgetUsd: context.budgetUsd }),
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  });
  return { agent, prompt, resultFile };
}

async function observePhase(
  phase: WorkerPhase,
  context: PhaseContext,
  deps: WorkerDeps,
): Promise<PhaseObservation> {
  const protectedTests = context.protectedTests ?? [];
  const protectedPaths = protectedTests.map((t) => t.path);
  const before = await takeSnapshot(context.cwd, protectedPaths);
  const specBefore = deps.spec.read(specSources(before));
  const call = await callAgent(phase, context, deps, {
    sources: specSources(before),
    graph: specBefore.graph,
  });
  const after = await takeSnapshot(context.cwd, protectedPaths);
  const { resultText, resultSource } = await readRecord(phase, context.cwd, call.resultFile, call.agent);
  const loopText = await readResultText(join(context.cwd, loopRecordPath(call.resultFile)));
  const specAfter = deps.spec.read(specSources(after));
  const diff = deps.spec.diff(specBefore, specAfter);
  const harness =
    context.harness === undefined ? undefined : await checkHarness(context.cwd, context.harness);
  const guard = detectViolations({
    phase,
    before,
    after,
    protectedTests,
    ...(harness === undefined ? {} : { harness }),
    ...(context.harness === undefined ? {} : { allowedTestChanges: context.harness.allowTestChanges }),
    removedConstructs: diff.removed,
    ...(context.tendRequest === undefined ? {} : { tendRequest: context.tendRequest }),
    ...(phase === 'propagate' ? { propagatedFiles: listedTestFiles(resultText) } : {}),
  });
  const reverts = await applyReverts(context.cwd, guard.reverts);
  return {
    ...call,
    specBefore,
    specAfter,
    diff,
    violations: guard.violations,
    reverts,
    allowed: guard.allowed,
    resultText,
    resultSource,
    loopText,
  };
}

/**
 * The phase's record: the result file when the agent wrote one (it wins), else the record it printed in its final
 * message (an official Allium agent returns its record), written to the result file so the record on disk is the
 * one the engine read. The final message comes redacted from the agent runner; the file is checked as any other.
 */
async function readRecord(
  phase: WorkerPhase,
  cwd: string,
  resultFile: string,
  agent: AgentRunResult,
): Promise<{ resultText: string | undefined; resultSource: PhaseObservation['resultSource'] }> {
  const path = join(cwd, resultFile);
  const written = await readResultText(path);
  if (written !== undefined) return { resultText: written, resultSource: 'file' };
  const printed = agent.finalText === undefined ? undefined : findPrintedRecord(phase, agent.finalText);
  if (printed === undefined) return { resultText: undefined, resultSource: undefined };
  await writeFileAtomic(path, printed.text);
  return { resultText: printed.text, resultSource: 'printed' };
}

async function verifyResult<P extends WorkerPhase>(
  phase: P,
  context: PhaseContext,
  deps: WorkerDeps,
  observed: PhaseObservation,
): Promise<Verification<P>> {
  const { agent } = observed;
  if (agent.outcome !== 'ok') {
    const detail = `the agent call ended ${agent.outcome} (exit ${agent.exitCode ?? 'none'})${agent.detail === undefined ? '' : `: ${agent.detail}`}`;
    return { failures: [{ reason: 'agent_failed', detail }] };
  }
  const text = observed.resultText;
  if (text === undefined) {
    const detail = `no result file at ${observed.resultFile}, and no ${phase} record in the agent's final message`;
    return { failures: [{ reason: 'no_result_file', detail }] };
  }
  const parsed = parseWorkerResult(phase, text);
  if (!parsed.ok) {
    const where =
      observed.resultSource === 'printed' ? "the record printed in the agent's final message: " : '';
    return { failures: [{ reason: 'result_invalid', detail: `${where}${parsed.issues.join('; ')}` }] };
  }
  const loop = observed.loopText === undefined ? undefined : parseLoopRecord(observed.loopText);
  if (loop !== undefined && !loop.ok)
    return { failures: [{ reason: 'result_invalid', detail: `loop record: ${loop.issues.join('; ')}` }] };
  const outside = outsidePaths(context.cwd, namedFiles(parsed.value));
  if (outside.length > 0)
    return {
      failures: [{ reason: 'claim_file_missing', detail: `outside the project: ${outside.join(', ')}` }],
    };
  const result = projectRelativePaths(context.cwd, parsed.value);
  const loopRecord = loop?.value;
  const testRuns =
    result.phase === 'propagate' ? await runEachTestFile(deps, context.cwd, result) : undefined;
  const testSources =
    testRuns === undefined ? undefined : await readSources(context.cwd, [...testRuns.keys()]);
  // The engine reconciles the spec's obligations with the generated tests itself: the claims of the loop record
  // when there is one, else every obligation a test names.
  const obligations =
    observed.specAfter.obligations === undefined
      ? undefined
      : sliceObligations(observed.specAfter.obligations, context.slice?.constructs);
  const reconciliation =
    result.phase !== 'propagate' || testRuns === undefined || obligations === undefined
      ? undefined
      : checkObligationClaims(
          { obligations },
          [
            ...obligationClaimTests(
              result,
              coverClaims(result, loopRecord, obligations),
              testRuns,
              testSources ?? new Map(),
            ),
            ...(await earlierTests(context, testRuns, obligations)),
          ],
          result.uncovered_obligations,
        );
  const failures = checkClaims(result, {
    ...(testSources === undefined ? {} : { testSources }),
    specBefore: observed.specBefore,
    specAfter: observed.specAfter,
    diff: observed.diff,
    missingFiles: await missingOrEmpty(context.cwd, namedFiles(result)),
    ...(testRuns === undefined ? {} : { testRuns }),
    ...(reconciliation === undefined ? {} : { obligationClaims: reconciliation }),
    ...(testSources === undefined ? {} : { testHashes: hashSources(testSources) }),
    ...(loopRecord === undefined ? {} : { loopRecord }),
  });
  return {
    failures,
    result,
    ...(loopRecord === undefined ? {} : { loopRecord }),
    ...(testRuns === undefined ? {} : { testRuns }),
    ...(reconciliation === undefined ? {} : { reconciliation }),
  };
}

/** The named paths that leave the project (absolute outside it, or through `..`). */
function outsidePaths(cwd: string, paths: readonly string[]): string[] {
  return paths.filter((path) => toProjectPath(cwd, path) === undefined);
}

/** `path` relative to the project root, or `undefined` when it leaves the project. */
function toProjectPath(cwd: string, path: string): string | undefined {
  const rel = isAbsolute(path) ? relative(cwd, path) : path;
  if (rel === '' || isAbsolute(rel) || rel.split(/[\\/]/).includes('..')) return undefined;
  return rel;
}

/** The record with every path relative to the project root (upstream agents may write absolute ones). */
function projectRelativePaths<P extends WorkerPhase>(cwd: string, result: PhaseResult<P>): PhaseResult<P> {
  const fix = (path: string) => toProjectPath(cwd, path) ?? path;
  const r = result as PhaseResult<WorkerPhase>;
  switch (r.phase) {
    case 'elicit':
    case 'tend':
    case 'distill':
      return { ...r, spec_path: fix(r.spec_path) } as PhaseResult<P>;
    case 'propagate':
      return {
        ...r,
        generated_tests: r.generated_tests.map((t) => ({ ...t, path: fix(t.path) })),
        ...(r.test_paths === undefined ? {} : { test_paths: r.test_paths.map(fix) }),
      } as PhaseResult<P>;
    case 'implement':
      return { ...r, files_changed: r.files_changed.map(fix) } as PhaseResult<P>;
    case 'weed':
      return r.artefacts === undefined
        ? result
        : ({ ...r, artefacts: r.artefacts.map(fix) } as PhaseResult<P>);
  }
}

/** What each generated test claims to cover: the loop record's claims, else every obligation of the plan. */
function coverClaims(
  result: PropagateResult,
  loopRecord: LoopRecord | undefined,
  obligations: readonly { readonly id: string }[],
): Map<string, readonly string[]> {
  if (loopRecord?.covers !== undefined) return new Map(loopRecord.covers.map((c) => [c.path, c.obligations]));
  const all = obligations.map((o) => o.id);
  return new Map(generatedTestPaths(result).map((path) => [path, all]));
}

/**
 * The tests earlier propagates generated (protected, not regenerated now), for the reconciliation: they were
 * collected when they were generated; the obligations they cover are those a test declared in them names.
 */
async function earlierTests(
  context: PhaseContext,
  regenerated: ReadonlyMap<string, unknown>,
  obligations: readonly { readonly id: string }[],
): Promise<ObligationClaimTest[]> {
  const paths = (context.protectedTests ?? []).map((t) => t.path).filter((p) => !regenerated.has(p));
  const sources = await readSources(context.cwd, paths);
  const ids = obligations.map((o) => o.id);
  return [...sources].map(([path, source]) => declaredCoverage(path, source, ids));
}

function hashSources(sources: ReadonlyMap<string, string>): Map<string, string> {
  return new Map([...sources].map(([path, text]) => [path, sha256(text)]));
}

function outcomeBase<P extends WorkerPhase>(
  phase: P,
  observed: PhaseObservation,
  failures: readonly ClaimFailure[],
) {
  const notes = failures.map((f): WorkerEvent => ({
    type: 'note',
    message: f.detail,
    data: { phase, reason: f.reason },
  }));
  return {
    phase,
    agent: observed.agent,
    ...(observed.agent.costUsd === undefined ? {} : { costUsd: observed.agent.costUsd }),
    resultFile: observed.resultFile,
    promptBytes: Buffer.byteLength(observed.prompt, 'utf8'),
    violations: observed.violations,
    reverts: observed.reverts,
    failures,
    events: [
      ...violationEvents(observed.violations, observed.reverts),
      ...allowedEvents(phase, observed),
      ...printedEvents(phase, observed),
      ...notes,
    ],
  };
}

async function finishPropagate(
  context: PhaseContext,
  result: PropagateResult,
  testRuns: ReadonlyMap<string, ObservedTestRun>,
): Promise<{ redCheck: RedCheckReport; protectedTests: ProtectedTest[] }> {
  const files = generatedTestPaths(result);
  const sources = new Map<string, string>();
  for (const file of files) sources.set(file, await readFile(join(context.cwd, file), 'utf8'));
  const recorded = await recordProtectedTests(context.cwd, context.slug, files, context.tick);
  return {
    redCheck: classifyRedCheck(context.mode, testRuns, sources),
    protectedTests: mergeProtectedTests(context.protectedTests ?? [], recorded),
  };
}

/**
 * Runs one phase end to end: snapshots spec and tests, assembles the prompt (slice-limited when the context names
 * a slice), runs the agent with a fresh result file path, snapshots again, runs the anti-cheat guards and carries
 * out their reverts, then reads, parses and verifies the result file. For a successful propagate it also runs
 * the red-check (each new test file alone) and records the new tests as protected. The outcome is `ok` only when
 * the agent succeeded, every claim held and no guard fired; otherwise the most serious reason comes first
 * (`cheat_detected`, then the agent, the result file, the claims). Rejects only for engine faults (a missing
 * template, an unwritable `.allium-loop/`), never for anything the agent did.
 */
export async function runWorker<P extends WorkerPhase>(
  phase: P,
  context: PhaseContext,
  deps: WorkerDeps,
): Promise<WorkerOutcome<P>> {
  const observed = await observePhase(phase, context, deps);
  const verification = await verifyResult(phase, context, deps, observed);
  const cheat: ClaimFailure[] =
    observed.violations.length === 0
      ? []
      : [{ reason: 'cheat_detected', detail: observed.violations.map(describeViolation).join('; ') }];
  const failures = [...cheat, ...verification.failures];
  const base = {
    ...outcomeBase(phase, observed, failures),
    ...(verification.reconciliation === undefined ? {} : { reconciliation: verification.reconciliation }),
    ...(verification.loopRecord === undefined ? {} : { loopRecord: verification.loopRecord }),
    ...(phase === 'distill' || phase === 'elicit'
      ? { findings: significantChanges(observed.diff).length }
      : {}),
  };
  const protectedTests = context.protectedTests ?? [];
  const first = failures[0];
  if (first !== undefined) {
    const result = verification.result === undefined ? {} : { result: verification.result };
    return {
      ...base,
      status: 'failed',
      reason: first.reason,
      detail: first.detail,
      protectedTests,
      ...result,
    };
  }
  const result = verification.result!;
  if (result.phase !== 'propagate') return { ...base, status: 'ok', result, protectedTests };
  return {
    ...base,
    status: 'ok',
    result,
    ...(await finishPropagate(context, result, verification.testRuns ?? new Map())),
  };
}

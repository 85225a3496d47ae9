import type { AgentRunResult } from '@allium-loop/agents';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { assemblePrompt } from './assemble-prompt.js';
import { applyReverts, type RevertOutcome } from './apply-reverts.js';
import { checkClaims, namedFiles, type ClaimFailure } from './check-claims.js';
import {
  detectViolations,
  type GuardViolation,
  type ProtectedTest,
  type WorkspaceSnapshot,
} from './detect-violations.js';
import { parseWorkerResult } from './parse-result.js';
import type { PhaseContext } from './phase-context.js';
import { mergeProtectedTests, recordProtectedTests } from './protect-tests.js';
import { classifyRedCheck } from './red-check.js';
import type { PhaseResult, PropagateResult } from './result-schemas.js';
import { takeSnapshot } from './take-snapshot.js';
import { describeViolation } from './describe-violation.js';
import type { WorkerPhase } from './worker-phase.js';
import type { ObservedTestRun, SpecReading, SpecSource, WorkerDeps } from './worker-ports.js';
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

async function readResultText(file: string): Promise<string | undefined> {
  return readFile(file, 'utf8').catch(() => undefined);
}

async function runEachTestFile(
  deps: WorkerDeps,
  cwd: string,
  result: PropagateResult,
): Promise<Map<string, ObservedTestRun>> {
  const runs = new Map<string, ObservedTestRun>();
  for (const file of result.testFiles)
    runs.set(file.path, await deps.tests.runFiles({ cwd, files: [file.path] }));
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

interface Verification<P extends WorkerPhase> {
  readonly failures: ClaimFailure[];
  readonly result?: PhaseResult<P>;
  readonly testRuns?: Map<string, ObservedTestRun>;
}

async function verifyResult<P extends WorkerPhase>(
  phase: P,
  context: PhaseContext,
  deps: WorkerDeps,
  evidence: {
    agent: AgentRunResult;
    resultPath: string;
    before: SpecReading;
    after: SpecReading;
    diff: ReturnType<WorkerDeps['spec']['diff']>;
  },
): Promise<Verification<P>> {
  if (evidence.agent.outcome !== 'ok') {
    const detail = `the agent call ended ${evidence.agent.outcome} (exit ${evidence.agent.exitCode ?? 'none'})`;
    return { failures: [{ reason: 'agent_failed', detail }] };
  }
  const text = await readResultText(evidence.resultPath);
  if (text === undefined)
    return { failures: [{ reason: 'no_result_file', detail: `no result file at ${evidence.resultPath}` }] };
  const parsed = parseWorkerResult(phase, text);
  if (!parsed.ok) return { failures: [{ reason: 'result_invalid', detail: parsed.issues.join('; ') }] };
  const result = parsed.value;
  const testRuns =
    result.phase === 'propagate' ? await runEachTestFile(deps, context.cwd, result) : undefined;
  const failures = checkClaims(result, {
    specBefore: evidence.before,
    specAfter: evidence.after,
    diff: evidence.diff,
    missingFiles: await missingOrEmpty(context.cwd, namedFiles(result)),
    ...(testRuns === undefined ? {} : { testRuns }),
  });
  return { failures, result, ...(testRuns === undefined ? {} : { testRuns }) };
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
  const previouslyProtected: readonly ProtectedTest[] = context.protectedTests ?? [];
  const before = await takeSnapshot(
    context.cwd,
    previouslyProtected.map((t) => t.path),
  );
  const specBefore = deps.spec.read(specSources(before));
  const { prompt, resultFile } = assemblePrompt(phase, context, {
    sources: specSources(before),
    graph: specBefore.graph,
  });
  const resultPath = join(context.cwd, resultFile);
  await mkdir(dirname(resultPath), { recursive: true });
  await rm(resultPath, { force: true });

  const agent = await deps.agent.run({
    prompt,
    cwd: context.cwd,
    phase,
    resultFile: resultPath,
    timeoutMs: context.timeoutMs,
    ...(context.budgetUsd === undefined ? {} : { budgetUsd: context.budgetUsd }),
    ...(context.signal === undefined ? {} : { signal: context.signal }),
  });

  const after = await takeSnapshot(
    context.cwd,
    previouslyProtected.map((t) => t.path),
  );
  const specAfter = deps.spec.read(specSources(after));
  const diff = deps.spec.diff(specBefore, specAfter);
  const guard = detectViolations({
    phase,
    before,
    after,
    protectedTests: previouslyProtected,
    removedConstructs: diff.removed,
    ...(context.tendRequest === undefined ? {} : { tendRequest: context.tendRequest }),
  });
  const reverts = await applyReverts(context.cwd, guard.reverts);
  const verification = await verifyResult(phase, context, deps, {
    agent,
    resultPath,
    before: specBefore,
    after: specAfter,
    diff,
  });

  const cheat: ClaimFailure[] =
    guard.violations.length === 0
      ? []
      : [{ reason: 'cheat_detected', detail: guard.violations.map(describeViolation).join('; ') }];
  const failures = [...cheat, ...verification.failures];
  const base = {
    phase,
    agent,
    ...(agent.costUsd === undefined ? {} : { costUsd: agent.costUsd }),
    resultFile,
    promptBytes: Buffer.byteLength(prompt, 'utf8'),
    violations: guard.violations,
    reverts,
    failures,
    events: [
      ...violationEvents(guard.violations, reverts),
      ...failures.map((f): WorkerEvent => ({
        type: 'note',
        message: f.detail,
        data: { phase, reason: f.reason },
      })),
    ],
  };
  const first = failures[0];
  if (first !== undefined) {
    return {
      ...base,
      status: 'failed',
      reason: first.reason,
      detail: first.detail,
      protectedTests: previouslyProtected,
      ...(verification.result === undefined ? {} : { result: verification.result }),
    };
  }
  const result = verification.result!;
  if (result.phase !== 'propagate')
    return { ...base, status: 'ok', result, protectedTests: previouslyProtected };
  const testFiles = result.testFiles.map((t) => t.path);
  const sources = new Map(
    await Promise.all(testFiles.map(async (f) => [f, await readFile(join(context.cwd, f), 'utf8')] as const)),
  );
  const recorded = await recordProtectedTests(context.cwd, context.slug, testFiles, context.tick);
  return {
    ...base,
    status: 'ok',
    result,
    redCheck: classifyRedCheck(context.mode, verification.testRuns ?? new Map(), sources),
    protectedTests: mergeProtectedTests(previouslyProtected, recorded),
  };
}

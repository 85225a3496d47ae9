import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import type { AgentRunner } from '@allium-loop/agents';
import { planSlices, touchedFromDiff } from '@allium-loop/decomposer';
import { writeFileAtomic, type Ledger } from '@allium-loop/ledger';
import { analyzeSpecs, diffInventory } from '@allium-loop/allium';
import { measureProject, runTests, type HarnessRecord, type TestCommand } from '@allium-loop/verify';
import {
  applyReverts,
  createSpecReader,
  createTestRunner,
  parseWorkerResult,
  resultFilePath,
  runWorker,
  type PhaseContext,
  type WorkerDeps,
  type WorkerOutcome,
  type WorkerPhase,
} from '@allium-loop/workers';
import type { Divergence, LoopMode } from '../decide/loop-state.js';
import type {
  LoopPorts,
  MeasureReport,
  PhaseReport,
  PhaseRequest,
  PlannedSlice,
} from '../driver/loop-ports.js';
import { plannedSlices } from '../driver/planned-slices.js';
import { gitCheckpoint, gitHead, gitWorkingTree } from './git.js';
import { listProjectFiles, readSpecSources } from './project-files.js';
import { buildPhaseContext, phaseSlug, questionId } from './phase-context.js';
import { runWitnessGate, traceFilePath } from './witness-gate.js';
import { scopedFiles, scopeGuard, withScopeNote, type Scope } from '../runs/scope.js';

/** What {@link createProjectPorts} needs to act on a real project. */
export interface ProjectPortsOptions {
  readonly cwd: string;
  readonly slug: string;
  readonly goal: string;
  readonly mode: LoopMode;
  readonly agent: AgentRunner;
  readonly testCommand: TestCommand;
  /** What the test command runs or reads, fingerprinted at the start of the run; workers guard it. */
  readonly harness?: HarnessRecord;
  readonly agentTimeoutMs: number;
  readonly testTimeoutMs: number;
  /** The ledger as it stands now (questions, protected tests). */
  readonly ledger: () => Ledger;
  readonly ask?: LoopPorts['ask'];
  /** Redaction applied to the result files agents leave under `.allium-loop/` once they have been read. */
  readonly redact?: (text: string) => string;
  /** Environment for the reference CLI lookup in the measurement (defaults to the engine's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The run's scope (`--scope`): phases see only it, and edits outside it are reverted. Empty: everything. */
  readonly scope?: Scope;
}

/**
 * The texts of the questions a ledger records as blocking and still unanswered: the only open questions the
 * measurement counts as blocking (everything else in the spec is parked). `allium-loop verify` reads the same.
 */
export function blockingQuestionTexts(ledger: Pick<Ledger, 'questions'>): string[] {
  return ledger.questions
    .filter((q) => q.classification === 'blocking' && q.status === 'open')
    .map((q) => q.text);
}

/** Where the spec as it was before the run is kept, to find what the first gather touched. */
export function specBaselineDir(cwd: string, slug: string): string {
  return join(cwd, '.allium-loop', slug, 'spec-before');
}

/** Copies the spec files into the run's baseline folder (once: an existing baseline is kept). */
export async function recordSpecBaseline(cwd: string, slug: string): Promise<void> {
  const dir = specBaselineDir(cwd, slug);
  const marker = join(dir, '.complete');
  if ((await stat(marker).catch(() => undefined)) !== undefined) return;
  const files = await listProjectFiles(cwd);
  for (const source of await readSpecSources(cwd, files.spec)) {
    await mkdir(dirname(join(dir, source.path)), { recursive: true });
    await writeFile(join(dir, source.path), source.text);
  }
  await mkdir(dir, { recursive: true });
  await writeFile(marker, files.spec.join('\n'));
}

const DIVERGENCE_KIND: Readonly<Record<string, Divergence['classification']>> = {
  'spec-bug': 'spec-bug',
  'code-bug': 'code-bug',
  aspirational: 'aspirational',
  'intentional-gap': 'intentional-gap',
};

/**
 * The loop's ports over a real project: agent phases through the workers (prompt, result contract, claim checks,
 * anti-cheat guards), the engine's own test runs and structural checks, git checkpoints, and slice planning.
 */
export function createProjectPorts(options: ProjectPortsOptions): LoopPorts {
  const { cwd, slug } = options;
  const runs = join(cwd, '.allium-loop', slug, 'test-runs');
  const deps: WorkerDeps = {
    agent: options.agent,
    spec: createSpecReader(),
    tests: createTestRunner({
      command: options.testCommand,
      outputDir: join(runs, 'files'),
      timeoutMs: options.testTimeoutMs,
    }),
  };
  let lastStructural: readonly { file: string; line: number; message: string }[] = [];

  const scope = options.scope ?? [];
  const context = async (request: PhaseRequest): Promise<PhaseContext> =>
    withScopeNote(await unscopedContext(request), scope);
  const unscopedContext = async (request: PhaseRequest): Promise<PhaseContext> => ({
    ...buildPhaseContext({
      request,
      cwd,
      slug,
      goal: options.goal,
      mode: options.mode,
      ledger: options.ledger(),
      files: scopedFiles(await listProjectFiles(cwd), scope),
      structural: lastStructural,
      timeoutMs: options.agentTimeoutMs,
    }),
    ...(options.harness === undefined ? {} : { harness: options.harness }),
  });

  const specDigest = async (): Promise<string> => {
    const files = await listProjectFiles(cwd);
    const hash = createHash('sha256');
    for (const source of await readSpecSources(cwd, files.spec))
      hash.update(`${source.path}\0${source.text}\0`);
    return hash.digest('hex');
  };

  const runAll = async (name: string) =>
    runTests({
      command: options.testCommand,
      cwd,
      outputDir: join(runs, name),
      timeoutMs: options.testTimeoutMs,
    });

  return {
    async runPhase(request) {
      const before = await specDigest();
      const guard = scopeGuard(cwd, scope);
      await guard.before();
      const started = Date.now();
      const outcome = await runWorker(request.phase as WorkerPhase, await context(request), deps);
      await redactFile(
        isAbsolute(outcome.resultFile) ? outcome.resultFile : join(cwd, outcome.resultFile),
        options.redact,
      );
      // Edits outside the run's scope are put back before anything measures the tree, and journaled.
      const outside = await guard.after(request.phase);
      const specChanged = (await specDigest()) !== before;
      const report = toPhaseReport(outcome, request, specChanged, options.ledger(), Date.now() - started);
      return outside.length === 0 ? report : { ...report, events: [...report.events, ...outside] };
    },
    async redCheck(tests) {
      const run = await runAll('red-check');
      const passed = new Set(run.cases.filter((c) => c.status === 'passed').map((c) => c.name));
      return { passing: tests.filter((t) => passed.has(t)), failing: tests.filter((t) => !passed.has(t)) };
    },
    async measure() {
      // The one measure, shared with `allium-loop verify`: same tests, structure and open-question rule.
      const measured = await measureProject({
        cwd,
        command: options.testCommand,
        outputDir: join(runs, 'measure'),
        timeoutMs: options.testTimeoutMs,
        blockingQuestions: blockingQuestionTexts(options.ledger()),
        ...(options.env === undefined ? {} : { env: options.env }),
      });
      lastStructural = measured.structure.diagnostics
        .filter((d) => d.severity === 'error')
        .map((d) => ({ file: d.location.file, line: d.location.line, message: d.message }));
      // One tree hash serves both the repeated-action check and the verdict's git state.
      const tree = await gitWorkingTree(cwd);
      const report: MeasureReport = {
        observation: {
          kind: 'measured',
          measurement: measured.observation,
          ...(tree === null ? {} : { treeHash: tree }),
        },
        structuralMessages: lastStructural.map((e) => `${e.file}:${String(e.line)} ${e.message}`),
        git: { head: await gitHead(cwd), tree },
      };
      return report;
    },
    async witness(request) {
      const ledger = options.ledger();
      return runWitnessGate({
        cwd,
        slug,
        ...(request.slice === undefined ? {} : { slice: request.slice }),
        command: options.testCommand,
        testTimeoutMs: options.testTimeoutMs,
        ...(options.env === undefined ? {} : { env: options.env }),
        protectedTests: ledger.protectedTests,
        blockingQuestions: blockingQuestionTexts(ledger),
        claim: request.claim,
      });
    },
    async writeTrace(text) {
      await writeFileAtomic(join(cwd, traceFilePath(slug)), text);
    },
    async restoreTests(tests) {
      const outcomes = await applyReverts(
        cwd,
        tests.map((t) => ({
          kind: 'restore_from_store' as const,
          path: t.path,
          storedCopy: t.storedCopy,
          sha256: t.sha256,
        })),
      );
      return outcomes.filter((o) => o.applied).map((o) => o.action.path);
    },
    async reconcile(request) {
      return reconcileResult(cwd, request, options.ledger());
    },
    ...(options.ask === undefined ? {} : { ask: options.ask }),
    async plan() {
      return planFromBaseline(cwd, slug);
    },
    async checkpoint(name, knownTree) {
      return gitCheckpoint(cwd, slug, name, knownTree);
    },
  };
}

/** Rewrites a file with secrets redacted, when redaction changes it; a missing file is left alone. */
async function redactFile(file: string, redact: ((text: string) => string) | undefined): Promise<void> {
  if (redact === undefined) return;
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  const clean = redact(text);
  if (clean !== text) await writeFile(file, clean);
}

function toPhaseReport(
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

function describeResult(
  outcome: Extract<WorkerOutcome, { status: 'ok' }>,
  request: PhaseRequest,
  specChanged: boolean,
  ledger: Ledger,
  observation: { kind: 'phase_done'; phase: PhaseRequest['phase']; costUsd?: number },
): Pick<PhaseReport, 'observation' | 'questions' | 'redCheck' | 'appliedQuestions'> {
  const result = outcome.result;
  switch (result.phase) {
    case 'elicit':
    case 'tend':
    case 'distill': {
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
    case 'propagate': {
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

/** Accepts a result file an interrupted call left, when it parses and every file it names exists. */
async function reconcileResult(
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
  const named = namedPaths(parsed.value as unknown as Record<string, unknown>);
  for (const path of named) {
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

function namedPaths(result: Record<string, unknown>): string[] {
  const paths: string[] = [];
  for (const key of ['specFiles', 'filesChanged']) {
    const list = result[key];
    if (Array.isArray(list)) paths.push(...list.filter((p): p is string => typeof p === 'string'));
  }
  const tests = result['testFiles'];
  if (Array.isArray(tests))
    for (const t of tests)
      if (typeof t === 'object' && t !== null && typeof (t as { path?: unknown }).path === 'string')
        paths.push((t as { path: string }).path);
  return paths;
}

/** Plans slices over the constructs the first gather touched: the inventory diff between baseline and now. */
async function planFromBaseline(cwd: string, slug: string): Promise<PlannedSlice[]> {
  const baseline = specBaselineDir(cwd, slug);
  const beforeFiles = await listProjectFiles(baseline);
  const before = analyzeSpecs(await readSpecSources(baseline, beforeFiles.spec));
  const after = analyzeSpecs(await readSpecSources(cwd, (await listProjectFiles(cwd)).spec));
  const diff = diffInventory(before.inventory, after.inventory);
  const nodes = new Set(after.graph.nodes.map((n) => n.id));
  const touched = new Set(touchedFromDiff(diff).filter((id) => nodes.has(id)));
  if (touched.size === 0) return [];
  return plannedSlices(planSlices(after.graph, touched));
}

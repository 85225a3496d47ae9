import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import type { AgentRunner } from '@allium-loop/agents';
import { planChange } from '@allium-loop/decomposer';
import { writeFileAtomic, type Ledger } from '@allium-loop/ledger';
import { analyzeSpecs } from '@allium-loop/allium';
import { measureProject, runTests, type HarnessRecord, type TestCommand } from '@allium-loop/verify';
import {
  applyReverts,
  createSpecReader,
  createTestRunner,
  runWorker,
  type PhaseContext,
  type WorkerDeps,
  type WorkerPhase,
} from '@allium-loop/workers';
import type { LoopMode } from '../decide/loop-state.js';
import type {
  LoopPorts,
  MeasureReport,
  PhaseReport,
  PhaseRequest,
  PlannedSlice,
  WitnessReport,
  WitnessRequest,
} from '../driver/loop-ports.js';
import { plannedSlices } from '../driver/planned-slices.js';
import { createGitSnapshots, type GitSnapshots } from './git.js';
import { listProjectFiles, readSpecSources, type ProjectFiles } from './project-files.js';
import { buildPhaseContext } from './phase-context.js';
import { reconcileResult, toPhaseReport } from './phase-report.js';
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

/** A structural error of the last measure, for the next phase's brief. */
interface StructuralError {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** What the ports of one run share: its options, the workers' dependencies, its git session, the last measure. */
interface ProjectSession {
  readonly options: ProjectPortsOptions;
  readonly deps: WorkerDeps;
  readonly git: GitSnapshots;
  /** Where the engine's own test runs keep their output. */
  readonly testRuns: string;
  structural: readonly StructuralError[];
}

/**
 * The loop's ports over a real project: agent phases through the workers (prompt, result contract, claim checks,
 * anti-cheat guards), the engine's own test runs and structural checks, git checkpoints, and slice planning.
 */
export function createProjectPorts(options: ProjectPortsOptions): LoopPorts {
  const { cwd, slug } = options;
  const session = openSession(options);
  return {
    runPhase: (request) => runProjectPhase(session, request),
    redCheck: (tests) => redCheckTests(session, tests),
    measure: () => measureTick(session),
    witness: (request) => witnessProject(options, request),
    writeTrace: (text) => writeFileAtomic(join(cwd, traceFilePath(slug)), text),
    restoreTests: (tests) => restoreProtectedTests(cwd, tests),
    reconcile: (request) => reconcileResult(cwd, request, options.ledger()),
    ...(options.ask === undefined ? {} : { ask: options.ask }),
    plan: () => planFromBaseline(cwd, slug),
    checkpoint: (name, known) => session.git.checkpoint(slug, name, known),
  };
}

/** The shared state of a run's ports: one git session (HEAD's index built once), the workers' dependencies. */
function openSession(options: ProjectPortsOptions): ProjectSession {
  const state = join(options.cwd, '.allium-loop', options.slug);
  const testRuns = join(state, 'test-runs');
  return {
    options,
    deps: {
      agent: options.agent,
      spec: createSpecReader(),
      tests: createTestRunner({
        command: options.testCommand,
        outputDir: join(testRuns, 'files'),
        timeoutMs: options.testTimeoutMs,
      }),
    },
    git: createGitSnapshots(options.cwd, join(state, 'git-index')),
    testRuns,
    structural: [],
  };
}

/** One agent phase through its worker; the spec is digested before and after to tell whether the phase changed it. */
async function runProjectPhase(session: ProjectSession, request: PhaseRequest): Promise<PhaseReport> {
  const { cwd, ledger, redact } = session.options;
  const scope = session.options.scope ?? [];
  const files = await listProjectFiles(cwd);
  const before = await specDigest(cwd, files.spec);
  const guard = scopeGuard(cwd, scope, async () => (await session.git.workingTree())?.tree ?? null);
  await guard.before();
  const started = Date.now();
  const outcome = await runWorker(
    request.phase as WorkerPhase,
    withScopeNote(phaseContext(session, request, scopedFiles(files, scope)), scope),
    session.deps,
  );
  await redactFile(resolve(cwd, outcome.resultFile), redact);
  // Edits outside the run's scope are put back before anything measures the tree, and journaled.
  const outside = await guard.after(request.phase);
  const specChanged = (await specDigest(cwd, (await listProjectFiles(cwd)).spec)) !== before;
  const report = toPhaseReport(outcome, request, specChanged, ledger(), Date.now() - started);
  return outside.length === 0 ? report : { ...report, events: [...report.events, ...outside] };
}

function phaseContext(session: ProjectSession, request: PhaseRequest, files: ProjectFiles): PhaseContext {
  const { options } = session;
  return {
    ...buildPhaseContext({
      request,
      cwd: options.cwd,
      slug: options.slug,
      goal: options.goal,
      mode: options.mode,
      ledger: options.ledger(),
      files,
      structural: session.structural,
      timeoutMs: options.agentTimeoutMs,
    }),
    ...(options.harness === undefined ? {} : { harness: options.harness }),
  };
}

/** A digest of every spec file's path and text. */
async function specDigest(cwd: string, spec: readonly string[]): Promise<string> {
  const hash = createHash('sha256');
  for (const source of await readSpecSources(cwd, spec)) hash.update(`${source.path}\0${source.text}\0`);
  return hash.digest('hex');
}

/** Runs the whole suite and says which of the named new tests pass. */
async function redCheckTests(
  session: ProjectSession,
  tests: readonly string[],
): Promise<{ passing: string[]; failing: string[] }> {
  const { options } = session;
  const run = await runTests({
    command: options.testCommand,
    cwd: options.cwd,
    outputDir: join(session.testRuns, 'red-check'),
    timeoutMs: options.testTimeoutMs,
  });
  const passed = new Set(run.cases.filter((c) => c.status === 'passed').map((c) => c.name));
  return { passing: tests.filter((t) => passed.has(t)), failing: tests.filter((t) => !passed.has(t)) };
}

/**
 * The one measure, shared with `allium-loop verify` (same tests, structure and open-question rule), and one hash
 * of the working tree that serves the repeated-action check, the verdict's git state and the tick's checkpoint.
 */
async function measureTick(session: ProjectSession): Promise<MeasureReport> {
  const { options } = session;
  const measured = await measureProject({
    cwd: options.cwd,
    command: options.testCommand,
    outputDir: join(session.testRuns, 'measure'),
    timeoutMs: options.testTimeoutMs,
    blockingQuestions: blockingQuestionTexts(options.ledger()),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  session.structural = measured.structure.diagnostics
    .filter((d) => d.severity === 'error')
    .map((d) => ({ file: d.location.file, line: d.location.line, message: d.message }));
  const hashed = await session.git.workingTree();
  return {
    observation: {
      kind: 'measured',
      measurement: measured.observation,
      ...(hashed === null ? {} : { treeHash: hashed.tree }),
    },
    structuralMessages: session.structural.map((e) => `${e.file}:${String(e.line)} ${e.message}`),
    git: hashed ?? { head: await session.git.head(), tree: null },
  };
}

/** The witness at a convergence gate, against the ledger as it stands. */
async function witnessProject(options: ProjectPortsOptions, request: WitnessRequest): Promise<WitnessReport> {
  const ledger = options.ledger();
  return runWitnessGate({
    cwd: options.cwd,
    slug: options.slug,
    ...(request.slice === undefined ? {} : { slice: request.slice }),
    ...(request.constructs === undefined ? {} : { constructs: request.constructs }),
    command: options.testCommand,
    testTimeoutMs: options.testTimeoutMs,
    ...(options.env === undefined ? {} : { env: options.env }),
    protectedTests: ledger.protectedTests,
    blockingQuestions: blockingQuestionTexts(ledger),
    claim: request.claim,
    ...(request.measured === undefined ? {} : { measured: request.measured }),
  });
}

/** Puts protected tests back from the engine's stored copies; the paths actually restored. */
async function restoreProtectedTests(
  cwd: string,
  tests: Parameters<LoopPorts['restoreTests']>[0],
): Promise<string[]> {
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
}

/** Rewrites a file with secrets redacted, when redaction changes it; a missing file is left alone. */
async function redactFile(file: string, redact: ((text: string) => string) | undefined): Promise<void> {
  if (redact === undefined) return;
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  const clean = redact(text);
  if (clean !== text) await writeFile(file, clean);
}

/** Plans slices over the constructs the first gather touched: the inventory diff between baseline and now. */
async function planFromBaseline(cwd: string, slug: string): Promise<PlannedSlice[]> {
  const baseline = specBaselineDir(cwd, slug);
  const beforeFiles = await listProjectFiles(baseline);
  const before = analyzeSpecs(await readSpecSources(baseline, beforeFiles.spec));
  const after = analyzeSpecs(await readSpecSources(cwd, (await listProjectFiles(cwd)).spec));
  const plan = planChange(before, after);
  return plan === undefined ? [] : plannedSlices(plan);
}

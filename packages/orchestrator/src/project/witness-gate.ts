import { mkdir, readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checkObligationClaims, questionKey } from '@allium-loop/allium';
import { witness, type GeneratedTestHash, type WitnessEvidence } from '@allium-loop/evaluator';
import { writeFileAtomic, type ProtectedTest } from '@allium-loop/ledger';
import { measureProject, type ProjectMeasurement, type TestCommand } from '@allium-loop/verify';
import { createSpecReader, declaredCoverage, sha256, sliceObligations } from '@allium-loop/workers';
import { filesAtHead } from './git.js';
import { listProjectFiles, readSpecSources } from './project-files.js';
import type { WitnessClaim, WitnessReport } from '../driver/loop-ports.js';

/** Where a witness record goes, relative to the project: the run's, or one slice's. */
export function witnessRecordPath(slug: string, slice?: string): string {
  return slice === undefined
    ? `.allium-loop/${slug}.witness.json`
    : `.allium-loop/${slug}/witness/${slice.replace(/[^\w.-]+/g, '-')}.witness.json`;
}

/** The run's trace, beside its ledger (upstream driving-the-loop §13), relative to the project. */
export function traceFilePath(slug: string): string {
  return `.allium-loop/${slug}.trace.jsonl`;
}

/** What {@link runWitnessGate} needs besides the claim. */
export interface WitnessGateOptions {
  readonly cwd: string;
  readonly slug: string;
  readonly slice?: string;
  /** The slice's constructs (graph ids): its coverage counts only their obligations. */
  readonly constructs?: readonly string[];
  readonly command: TestCommand;
  readonly testTimeoutMs?: number;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The generated tests with the hashes propagate recorded (the ledger's protected tests now). */
  readonly protectedTests: readonly ProtectedTest[];
  /** Texts of the questions the run recorded as blocking and that are still unanswered. */
  readonly blockingQuestions: readonly string[];
  readonly claim: WitnessClaim;
  /**
   * A measurement of this tree just taken (by `allium-loop verify`): the witness reads it instead of running the
   * tests a second time. Absent: the witness runs the one measure itself.
   */
  readonly measured?: ProjectMeasurement;
}

/**
 * The engine's witness at a convergence gate (upstream `witness-SKILL.md`), deterministic and without a model:
 * re-runs the test command with the one measure (`measureProject`, also the structure and the spec's open
 * questions), re-hashes every generated test against the hash propagate recorded, compares the run's claim with
 * that ground truth, and writes the record to `.allium-loop/<slug>.witness.json` (a slice's under
 * `.allium-loop/<slug>/witness/`) atomically. It fixes nothing: tampered tests are returned for the loop to
 * route. Throws only when the test command cannot be started or the record cannot be written.
 */
export async function runWitnessGate(options: WitnessGateOptions): Promise<WitnessReport> {
  const { cwd, claim } = options;
  const recorded = options.blockingQuestions;
  const measured =
    options.measured ??
    (await measureProject({
      cwd,
      command: options.command,
      outputDir: join(cwd, '.allium-loop', options.slug, 'test-runs', 'witness'),
      blockingQuestions: recorded,
      ...(options.testTimeoutMs === undefined ? {} : { timeoutMs: options.testTimeoutMs }),
      ...(options.env === undefined ? {} : { env: options.env }),
    }));
  const generated = await hashGeneratedTests(cwd, options.protectedTests);
  const recordPath = witnessRecordPath(options.slug, options.slice);
  const names = new Set(measured.tests.cases.map((c) => c.name));
  const evidence: WitnessEvidence = {
    slug: options.slice === undefined ? options.slug : `${options.slug}/${options.slice}`,
    tick: claim.tick,
    recordPath,
    mode: claim.mode,
    rerun: measured.observation.tests,
    ...(claim.recorded === undefined ? {} : { recorded: claim.recorded }),
    generatedTests: generated,
    ...(claim.reconciliation === undefined
      ? {}
      : {
          reconciliation: await reconcileAtGate(
            cwd,
            options.protectedTests,
            claim.reconciliation.uncovered,
            options.constructs,
          ),
        }),
    ...(claim.weed === undefined ? {} : { weed: claim.weed }),
    questions: matchQuestions(
      measured.questions.blocking.map((q) => q.text),
      measured.questions.parked.map((q) => q.text),
      recorded,
      claim.parkedReported,
    ),
    structuralErrors: measured.observation.structuralErrors,
    ...(claim.distillNew === undefined ? {} : { distillNew: claim.distillNew }),
    ...(claim.redBeforeGreen === undefined
      ? {}
      : {
          redBeforeGreen: {
            // A generated test that no longer exists (propagate replaced it) has nothing left to witness.
            newTests: claim.redBeforeGreen.newTests.filter((t) => names.has(t)),
            seenRed: claim.redBeforeGreen.seenRed,
            seenGreen: claim.redBeforeGreen.seenGreen ?? [],
          },
        }),
  };
  const result = witness(evidence);
  const file = join(cwd, recordPath);
  await mkdir(dirname(file), { recursive: true });
  await writeFileAtomic(file, `${JSON.stringify(result, null, 2)}\n`);
  const changed = new Set(generated.filter((g) => g.currentHash !== g.recordedHash).map((g) => g.path));
  const tests = measured.observation.tests;
  return {
    result,
    failing: tests.counts === 'known' ? tests.failing : [],
    tampered: options.protectedTests.filter((t) => changed.has(t.path)),
    measured,
  };
}

/**
 * The witness's own reconciliation of the spec's test obligations with the tests as they are on disk now (upstream
 * `N obligations, M covered, K uncovered`): an obligation is covered when a test file that still exists declares a
 * test naming its id or its construct (`checkObligationClaims`). The test files that count are the run's generated
 * tests and the test files HEAD already held when the run began (the user's, or earlier slices' merged work when a
 * slice runs as its own job); a test file another phase of this run created does not count. In a slice, only the
 * obligations of the slice's constructs count. Uncovered obligations keep the reason propagate reported, if any.
 */
export async function reconcileAtGate(
  cwd: string,
  tests: readonly ProtectedTest[],
  reported: readonly { readonly id: string; readonly reason?: string }[],
  constructs?: readonly string[],
): Promise<NonNullable<WitnessEvidence['reconciliation']>> {
  const files = await listProjectFiles(cwd);
  const all = createSpecReader().read(await readSpecSources(cwd, files.spec)).obligations ?? [];
  const obligations = sliceObligations(all, constructs);
  const ids = obligations.map((o) => o.id);
  const committed = await filesAtHead(cwd);
  const paths = new Set([...tests.map((t) => t.path), ...files.tests.filter((p) => committed.has(p))]);
  const claims = await Promise.all(
    [...paths].map(async (path) => {
      const source = await readFile(join(cwd, path), 'utf8').catch(() => '');
      return declaredCoverage(path, source, ids);
    }),
  );
  const reconciled = checkObligationClaims(
    { obligations },
    claims,
    reported.map((r) => ({
      obligation: r.id,
      ...(r.reason === undefined ? {} : { classification: r.reason }),
    })),
  );
  return {
    obligations: reconciled.obligations,
    covered: reconciled.covered,
    uncovered: reconciled.uncovered,
  };
}

/** Each generated test with propagate's hash and its content hash now (`null`: the file is gone). */
export async function hashGeneratedTests(
  cwd: string,
  tests: readonly ProtectedTest[],
): Promise<GeneratedTestHash[]> {
  return Promise.all(
    tests.map(async (test) => {
      const text = await readFile(join(cwd, test.path), 'utf8').catch(() => undefined);
      return {
        path: test.path,
        recordedHash: test.sha256,
        currentHash: text === undefined ? null : sha256(text),
      };
    }),
  );
}

/**
 * The open-question evidence, every text spelled as the spec spells it when the spec still holds it (questions
 * match by {@link questionKey}, the one rule the measure classifies with).
 */
function matchQuestions(
  blockingInSpec: readonly string[],
  parkedInSpec: readonly string[],
  recordedBlocking: readonly string[],
  reportedParked: readonly string[],
): NonNullable<WitnessEvidence['questions']> {
  const inSpec = new Map([...blockingInSpec, ...parkedInSpec].map((t) => [questionKey(t), t]));
  const spelled = (text: string) => inSpec.get(questionKey(text)) ?? text;
  return {
    blockingInSpec,
    parkedInSpec,
    recordedBlocking: recordedBlocking.map(spelled),
    reportedParked: reportedParked.map(spelled),
  };
}

import { join } from 'node:path';
import {
  evaluateInvariant,
  type InvariantPolicy,
  type InvariantVerdict,
  type Observation,
  type TestTerm,
  type WeedTerm,
} from '@allium-loop/evaluator';
import { discoverTestCommand } from './discovery/discover-test-command.js';
import { checkHarness } from './harness/check-harness.js';
import { describeHarnessChange, type HarnessEntry, type HarnessRecord } from './harness/harness-record.js';
import { runTests } from './run/run-tests.js';
import { checkStructure, type StructureReport } from './structure/check-structure.js';
import { classifyOpenQuestions, type ClassifiedQuestions } from './structure/open-questions.js';
import type { TestCommand, TestRunResult } from './test-run.js';

/** Inputs of {@link verifyProject}. */
export interface VerifyProjectOptions {
  readonly cwd: string;
  readonly policy: InvariantPolicy;
  /** The weed verdict from the latest ledger; `not_run` when there is none. */
  readonly weed: WeedTerm;
  /** Texts of open questions the ledger records as parked; every other open question counts as blocking. */
  readonly parkedQuestions?: ReadonlySet<string>;
  /** Skip discovery and run this command. */
  readonly testCommand?: TestCommand;
  /** Where the test output goes (default `<cwd>/.allium-loop/verify`). */
  readonly outputDir?: string;
  readonly timeoutMs?: number;
  /** Environment for the reference CLI lookup. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * The harness a run recorded (from outside the project when available): it is compared with the project now,
   * and its test command runs instead of a discovered one that differs (a forged `testCommand` never runs).
   */
  readonly harness?: { readonly record: HarnessRecord; readonly source: string };
}

/** The harness comparison of a verification. */
export interface HarnessVerdict {
  /** Where the record came from, e.g. `run add-x (recorded outside the project)`. */
  readonly source: string;
  readonly entries: number;
  readonly changed: readonly HarnessEntry[];
}

/** Everything one verification measured, the observation built from it, and the invariant's verdict. */
export interface VerifyProjectResult {
  readonly tests: TestRunResult;
  readonly structure: StructureReport;
  readonly questions: ClassifiedQuestions;
  readonly observation: Observation;
  readonly verdict: InvariantVerdict;
  /** Present when a recorded harness was given. */
  readonly harness?: HarnessVerdict;
}

async function chooseCommand(options: VerifyProjectOptions): Promise<TestCommand> {
  if (options.testCommand !== undefined) return options.testCommand;
  const recorded = options.harness?.record.commands[0];
  const discovered = await discoverTestCommand(options.cwd).catch((error: unknown) => {
    if (recorded === undefined) throw error;
    return undefined;
  });
  if (recorded === undefined || discovered?.command === recorded) return discovered!;
  return {
    command: recorded,
    source: 'the harness record',
    reason: `recorded when ${options.harness!.source} started${discovered === undefined ? '' : `; the project now names \`${discovered.command}\``}`,
  };
}

/**
 * Verifies a project with the engine's own measurements: discovers (or takes) the test command and runs it,
 * checks the specs' structure, counts open questions with the parser, and evaluates the convergence invariant.
 * Throws {@link VerifyError} `verify.no_test_command` when no test command can be found, and
 * `verify.spawn_failed` when it cannot be started.
 */
export async function verifyProject(options: VerifyProjectOptions): Promise<VerifyProjectResult> {
  const command = await chooseCommand(options);
  const structure = await checkStructure({
    cwd: options.cwd,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const tests = await runTests({
    command,
    cwd: options.cwd,
    outputDir: options.outputDir ?? join(options.cwd, '.allium-loop', 'verify'),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  const questions = classifyOpenQuestions(structure.openQuestions, options.parkedQuestions ?? new Set());
  const observation: Observation = {
    tests: toTestTerm(tests),
    weed: options.weed,
    structuralErrors: structure.errors,
    openQuestions: { blocking: questions.blocking.length, parked: questions.parked.length },
  };
  const verdict = evaluateInvariant(observation, options.policy);
  if (options.harness === undefined) return { tests, structure, questions, observation, verdict };
  const { changed } = await checkHarness(options.cwd, options.harness.record);
  const harness = { source: options.harness.source, entries: options.harness.record.entries.length, changed };
  if (changed.length === 0) return { tests, structure, questions, observation, verdict, harness };
  const term = {
    term: 'harness_changed' as const,
    message: `harness: ${String(changed.length)} change(s) since ${options.harness.source} recorded it: ${changed.map(describeHarnessChange).join('; ')}`,
    count: changed.length,
    names: changed.map((entry) => entry.label),
  };
  return {
    tests,
    structure,
    questions,
    observation,
    verdict: { converged: false, unmet: [term, ...verdict.unmet] },
    harness,
  };
}

/** The evaluator's test term of a run: known counts with failing names, or unknown with the exit code. */
export function toTestTerm(result: TestRunResult): TestTerm {
  if (result.counts.kind === 'unknown') {
    return { counts: 'unknown', exitCode: result.exitCode, timedOut: result.timedOut };
  }
  return {
    counts: 'known',
    passed: result.counts.passed,
    failed: result.counts.failed,
    skipped: result.counts.skipped,
    failing: result.cases.filter((testCase) => testCase.status === 'failed').map((testCase) => testCase.name),
    exitCode: result.exitCode,
  };
}

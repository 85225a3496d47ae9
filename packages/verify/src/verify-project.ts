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
}

/** Everything one verification measured, the observation built from it, and the invariant's verdict. */
export interface VerifyProjectResult {
  readonly tests: TestRunResult;
  readonly structure: StructureReport;
  readonly questions: ClassifiedQuestions;
  readonly observation: Observation;
  readonly verdict: InvariantVerdict;
}

/**
 * Verifies a project with the engine's own measurements: discovers (or takes) the test command and runs it,
 * checks the specs' structure, counts open questions with the parser, and evaluates the convergence invariant.
 * Throws {@link VerifyError} `verify.no_test_command` when no test command can be found, and
 * `verify.spawn_failed` when it cannot be started.
 */
export async function verifyProject(options: VerifyProjectOptions): Promise<VerifyProjectResult> {
  const command = options.testCommand ?? (await discoverTestCommand(options.cwd));
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
  return {
    tests,
    structure,
    questions,
    observation,
    verdict: evaluateInvariant(observation, options.policy),
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

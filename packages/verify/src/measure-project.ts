import { classifyOpenQuestions, type ClassifiedQuestions } from '@allium-loop/allium';
import type { Observation, TestTerm } from '@allium-loop/evaluator';
import { runTests } from './run/run-tests.js';
import { checkStructure, type StructureReport } from './structure/check-structure.js';
import type { TestCommand, TestRunResult } from './test-run.js';

/** Inputs of {@link measureProject}. */
export interface MeasureProjectOptions {
  readonly cwd: string;
  readonly command: TestCommand;
  /** Where the test output goes. */
  readonly outputDir: string;
  readonly timeoutMs?: number;
  /**
   * Texts of the questions someone classified as blocking and nobody has answered yet (from the ledger). Every
   * other open question in the spec is parked — see `classifyOpenQuestions` of `@allium-loop/allium`.
   */
  readonly blockingQuestions: Iterable<string>;
  /** Environment for the reference CLI lookup (defaults to the engine's). */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** What one measurement of a working tree found, and the observation terms built from it (weed aside). */
export interface ProjectMeasurement {
  readonly tests: TestRunResult;
  readonly structure: StructureReport;
  readonly questions: ClassifiedQuestions;
  readonly observation: Omit<Observation, 'weed' | 'distillNew'>;
}

/**
 * The one measure of a working tree, shared by the loop's end-of-tick measurement and `allium-loop verify`: runs
 * the test command, checks the specs' structure (engine parser plus the reference CLI when present), collects the
 * open questions with the one collector and splits them with the one classification rule.
 */
export async function measureProject(options: MeasureProjectOptions): Promise<ProjectMeasurement> {
  const tests = await runTests({
    command: options.command,
    cwd: options.cwd,
    outputDir: options.outputDir,
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
  });
  const structure = await checkStructure({
    cwd: options.cwd,
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const questions = classifyOpenQuestions(structure.openQuestions, options.blockingQuestions);
  return {
    tests,
    structure,
    questions,
    observation: {
      tests: toTestTerm(tests),
      structuralErrors: structure.errors,
      openQuestions: { blocking: questions.blocking.length, parked: questions.parked.length },
    },
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

import { join } from 'node:path';
import type { ClassifiedQuestions } from '@allium-loop/allium';
import {
  evaluateInvariant,
  type InvariantPolicy,
  type InvariantVerdict,
  type Observation,
  type WeedTerm,
} from '@allium-loop/evaluator';
import { discoverTestCommand } from './discovery/discover-test-command.js';
import { measureProject } from './measure-project.js';
import type { StructureReport } from './structure/check-structure.js';
import type { TestCommand, TestRunResult } from './test-run.js';

/** Inputs of {@link verifyProject}. */
export interface VerifyProjectOptions {
  readonly cwd: string;
  readonly policy: InvariantPolicy;
  /** The weed verdict from the latest ledger; `not_run` when there is none. */
  readonly weed: WeedTerm;
  /**
   * Texts of open questions the ledger records as blocking and unanswered; every other open question in the spec
   * (parked, or classified by nobody) counts as parked — the same rule the loop measures with.
   */
  readonly blockingQuestions?: Iterable<string>;
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
 * Verifies a project with the engine's own measurements — the same {@link measureProject} the loop uses at the
 * end of every tick — and evaluates the convergence invariant. Throws {@link VerifyError}
 * `verify.no_test_command` when no test command can be found, and `verify.spawn_failed` when it cannot be started.
 */
export async function verifyProject(options: VerifyProjectOptions): Promise<VerifyProjectResult> {
  const command = options.testCommand ?? (await discoverTestCommand(options.cwd));
  const measured = await measureProject({
    cwd: options.cwd,
    command,
    outputDir: options.outputDir ?? join(options.cwd, '.allium-loop', 'verify'),
    blockingQuestions: options.blockingQuestions ?? [],
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  const observation: Observation = { ...measured.observation, weed: options.weed };
  return {
    tests: measured.tests,
    structure: measured.structure,
    questions: measured.questions,
    observation,
    verdict: evaluateInvariant(observation, options.policy),
  };
}

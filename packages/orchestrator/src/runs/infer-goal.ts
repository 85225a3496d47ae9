import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { Ledger, LedgerStore } from '@allium-loop/ledger';
import { discoverTestCommand, runTests, VerifyError, type TestCommand } from '@allium-loop/verify';
import { blockingQuestionTexts } from '../project/project-ports.js';

/** What a goal was inferred from, in the order {@link inferGoal} looks. */
export type GoalEvidence =
  | { readonly kind: 'blocking-question'; readonly text: string; readonly slug: string }
  | {
      readonly kind: 'failing-test';
      readonly command: string;
      /** The failing tests' names; empty when the runner's counts could not be read. */
      readonly failing: readonly string[];
      readonly exitCode: number | null;
    }
  | { readonly kind: 'spec-drift'; readonly files: readonly string[]; readonly since: string };

/** A goal for `run` without one, and why. */
export interface InferredGoal {
  readonly goal: string;
  readonly source: GoalEvidence['kind'];
  /** One line for the user: what was found. */
  readonly reason: string;
}

/** What {@link inferGoal} needs. */
export interface InferGoalOptions {
  readonly cwd: string;
  readonly store: LedgerStore;
  /** `testCommand` of the config file, when set; otherwise the test command is discovered (none: no test step). */
  readonly testCommand?: string;
  readonly testTimeoutMs?: number;
}

const MAX_NAMED = 3;

/** The goal and the line announcing it, for one piece of evidence. Pure. */
export function goalFromEvidence(evidence: GoalEvidence): InferredGoal {
  switch (evidence.kind) {
    case 'blocking-question':
      return {
        goal: `settle the blocking open question "${evidence.text}" and bring the spec and code in line with the answer`,
        source: evidence.kind,
        reason: `run ${evidence.slug} recorded a blocking question nobody has answered`,
      };
    case 'failing-test': {
      const named = evidence.failing.slice(0, MAX_NAMED).join(', ');
      const more =
        evidence.failing.length > MAX_NAMED ? ` and ${String(evidence.failing.length - MAX_NAMED)} more` : '';
      return {
        goal:
          evidence.failing.length === 0
            ? `make the tests pass (${evidence.command} exits with code ${String(evidence.exitCode)})`
            : `make the failing test${evidence.failing.length === 1 ? '' : 's'} pass: ${named}${more}`,
        source: evidence.kind,
        reason: `${evidence.command} fails${evidence.failing.length === 0 ? '' : ` (${String(evidence.failing.length)} failing)`}`,
      };
    }
    case 'spec-drift':
      return {
        goal: `bring the code in line with the spec changes in ${evidence.files.slice(0, MAX_NAMED).join(', ')}${evidence.files.length > MAX_NAMED ? ` and ${String(evidence.files.length - MAX_NAMED)} more` : ''}`,
        source: evidence.kind,
        reason: `the spec changed since ${evidence.since}`,
      };
  }
}

/**
 * A goal for `run` given none, inferred from the project, looking in this order and stopping at the first found:
 * 1. an open blocking question a spec-loop run recorded (blocking questions are settled before dependent work);
 * 2. a failing test (the project's test command, run once, outside the project's state directory);
 * 3. drift between spec and code: `.allium` files changed since the last converged run's final checkpoint, or,
 *    without one, since `HEAD` (edited, staged or new).
 * `undefined` when nothing is found (the CLI then asks on a terminal, or stops with a usage error). Writes nothing.
 */
export async function inferGoal(options: InferGoalOptions): Promise<InferredGoal | undefined> {
  const ledgers = await readLedgers(options.store);
  const question = blockingQuestion(ledgers);
  if (question !== undefined) return goalFromEvidence(question);
  const failing = await failingTests(options);
  if (failing !== undefined) return goalFromEvidence(failing);
  const drift = await specDrift(options.cwd, ledgers);
  return drift === undefined ? undefined : goalFromEvidence(drift);
}

/** Every readable spec-loop ledger, most recently updated first. */
async function readLedgers(store: LedgerStore): Promise<Ledger[]> {
  const ledgers: Ledger[] = [];
  for (const slug of await store.list()) {
    const loaded = await store.load(slug);
    if (loaded.ok && loaded.value.ledger.mode === 'spec') ledgers.push(loaded.value.ledger);
  }
  return ledgers.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}

function blockingQuestion(ledgers: readonly Ledger[]): GoalEvidence | undefined {
  for (const ledger of ledgers) {
    const [text] = blockingQuestionTexts(ledger);
    if (text !== undefined) return { kind: 'blocking-question', text, slug: ledger.slug };
  }
  return undefined;
}

async function testCommandOf(options: InferGoalOptions): Promise<TestCommand | undefined> {
  if (options.testCommand !== undefined)
    return { command: options.testCommand, source: 'allium-loop.yaml testCommand', reason: 'configured' };
  try {
    return await discoverTestCommand(options.cwd);
  } catch (error) {
    if (VerifyError.is(error) && error.code === 'verify.no_test_command') return undefined;
    throw error;
  }
}

async function failingTests(options: InferGoalOptions): Promise<GoalEvidence | undefined> {
  const command = await testCommandOf(options);
  if (command === undefined) return undefined;
  const outputDir = await mkdtemp(join(tmpdir(), 'allium-loop-infer-'));
  try {
    const result = await runTests({
      command,
      cwd: options.cwd,
      outputDir,
      ...(options.testTimeoutMs === undefined ? {} : { timeoutMs: options.testTimeoutMs }),
    });
    const failing = result.cases.filter((c) => c.status === 'failed').map((c) => c.name);
    if (result.exitCode === 0 && failing.length === 0) return undefined;
    return { kind: 'failing-test', command: command.command, failing, exitCode: result.exitCode };
  } finally {
    await rm(outputDir, { recursive: true, force: true });
  }
}

async function git(cwd: string, args: readonly string[]): Promise<string[] | undefined> {
  const result = await execa('git', args, { cwd, reject: false });
  if (result.exitCode !== 0) return undefined;
  return result.stdout.split('\n').filter((line) => line.trim() !== '');
}

async function specDrift(cwd: string, ledgers: readonly Ledger[]): Promise<GoalEvidence | undefined> {
  const converged = ledgers.find((ledger) => ledger.terminal?.state === 'converged');
  const checkpoint = [...(converged?.checkpoints ?? [])].sort((a, b) => a.at.localeCompare(b.at)).at(-1);
  const diff = (base: string) => git(cwd, ['diff', '--name-only', '--relative', base, '--', '*.allium']);
  // A checkpoint whose object is gone (pruned refs) falls back to HEAD.
  const fromCheckpoint = checkpoint === undefined ? undefined : await diff(checkpoint.object);
  const changed = fromCheckpoint ?? (await diff('HEAD'));
  if (changed === undefined) return undefined;
  const since =
    fromCheckpoint === undefined || converged === undefined || checkpoint === undefined
      ? 'the last commit'
      : `run ${converged.slug} converged (${checkpoint.ref})`;
  const added = (await git(cwd, ['ls-files', '--others', '--exclude-standard', '--', '*.allium'])) ?? [];
  const files = [...new Set([...changed, ...added])].sort();
  return files.length === 0 ? undefined : { kind: 'spec-drift', files, since };
}

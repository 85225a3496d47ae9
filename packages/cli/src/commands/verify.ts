import { parseArgs } from 'node:util';
import type { InvariantPolicy, WeedTerm } from '@allium-loop/evaluator';
import { AlliumLoopError, formatError } from '@allium-loop/errors';
import type { WitnessResult } from '@allium-loop/evaluator';
import {
  verifyProject,
  type HarnessRecord,
  type ProjectMeasurement,
  type VerifyProjectResult,
} from '@allium-loop/verify';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';

/** The weed verdict and blocking questions recorded by the latest run in a project, and where they came from. */
export interface LedgerFacts {
  readonly weed: WeedTerm;
  /** Texts of the questions the ledger records as blocking and unanswered; every other open question is parked. */
  readonly blockingQuestions: readonly string[];
  /** One line for the report, e.g. `weed verdict from ledger add-gift-cards (tick 4)`. */
  readonly note: string;
}

/** What the verify command needs besides its arguments and io. */
export interface VerifyDeps {
  /** Reads the latest ledger's weed verdict and parked questions. */
  readonly readLedgerFacts: (cwd: string) => Promise<LedgerFacts>;
  /**
   * Reads the harness record of the latest run here (outside the project first, then the ledger); `verify`
   * compares the project with it and runs its test command. Absent: nothing is compared.
   */
  readonly readHarness?: (
    cwd: string,
    env: Readonly<Record<string, string | undefined>>,
  ) => Promise<{ readonly record: HarnessRecord; readonly source: string } | undefined>;
  /**
   * Re-runs the witness over the latest spec-loop run here, against this measurement, and writes its record;
   * `undefined` when no run is recorded. Absent: no witness is run.
   */
  readonly witness?: (
    cwd: string,
    env: Readonly<Record<string, string | undefined>>,
    measured: ProjectMeasurement,
  ) => Promise<{ readonly result: WitnessResult } | undefined>;
}

/** Used until the ledger package exports a loader: no weed verdict, no parked questions, and it says so. */
export const noLedgerFacts: VerifyDeps['readLedgerFacts'] = async () => ({
  weed: { status: 'not_run' },
  blockingQuestions: [],
  note: 'no weed verdict: reading it from the ledger is not available in this version',
});

const SYNOPSIS = 'verify [--json] [--no-weed] [--strict-questions]';

const HELP = [
  `Usage: allium-loop ${SYNOPSIS}`,
  '',
  'Evaluate the convergence invariant now, from the engine’s own measurements: run the tests, check the',
  'spec’s structure, count open questions, and read the latest weed verdict. Then re-run the witness over the',
  'latest spec-loop run here: its claim against this tree and the generated-test hashes propagate recorded',
  '(record in .allium-loop/<slug>.witness.json). A CI gate.',
  '',
  'Options:',
  '  --json              Print the verdict and every measurement as one JSON document.',
  '  --no-weed           Do not require a clean weed verdict.',
  '  --strict-questions  Parked open questions also block convergence.',
  '  -h, --help          Show this help.',
  '',
  'Exit codes: 0 converged and witnessed, 1 not converged or the witness did not pass (each unmet term and',
  'violation is printed), 2 usage or configuration error.',
  '',
].join('\n');

interface VerifyArgs {
  readonly json: boolean;
  readonly noWeed: boolean;
  readonly strictQuestions: boolean;
  readonly help: boolean;
}

/** `allium-loop verify`: exit 0 only when converged, 1 when not, 2 on a usage or configuration error. */
export function verifyCommand(deps: VerifyDeps = { readLedgerFacts: noLedgerFacts }): Command {
  return {
    name: 'verify',
    synopsis: SYNOPSIS,
    summary: 'Evaluate the convergence invariant now (a CI gate).',
    run: async (argv, io) => {
      const args = parseVerifyArgs(argv, io);
      if (args === undefined) return ExitCode.usage;
      if (args.help) {
        io.stdout(HELP);
        return ExitCode.ok;
      }
      return runVerify(args, io, deps);
    },
  };
}

function parseVerifyArgs(argv: readonly string[], io: CliIo): VerifyArgs | undefined {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        json: { type: 'boolean' },
        'no-weed': { type: 'boolean' },
        'strict-questions': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    });
    return {
      json: values.json === true,
      noWeed: values['no-weed'] === true,
      strictQuestions: values['strict-questions'] === true,
      help: values.help === true,
    };
  } catch (error) {
    io.stderr(
      `allium-loop verify: ${(error as Error).message}\nRun 'allium-loop verify --help' for usage.\n`,
    );
    return undefined;
  }
}

async function runVerify(args: VerifyArgs, io: CliIo, deps: VerifyDeps): Promise<number> {
  const policy: InvariantPolicy = {
    strictQuestions: args.strictQuestions,
    requireWeed: !args.noWeed,
    codeFirst: false,
  };
  const ledger = await deps.readLedgerFacts(io.cwd);
  const harness = await deps.readHarness?.(io.cwd, io.env);
  let result: VerifyProjectResult;
  try {
    result = await verifyProject({
      ...(harness === undefined ? {} : { harness }),
      cwd: io.cwd,
      policy,
      weed: ledger.weed,
      blockingQuestions: ledger.blockingQuestions,
      env: io.env,
    });
  } catch (error) {
    if (!AlliumLoopError.is(error) || !error.code.startsWith('verify.')) throw error;
    io.stderr(`allium-loop verify: ${formatError(error)}\n`);
    return ExitCode.usage;
  }
  // The CI gate is the witness too: the recorded run's claim, checked against this very measurement.
  const witnessed = (await deps.witness?.(io.cwd, io.env, result))?.result;
  io.stdout(
    args.json
      ? `${JSON.stringify({ ...toJson(result, ledger, policy), witness: witnessed ?? null }, null, 2)}\n`
      : `${renderVerify(result, ledger, args)}${renderWitness(witnessed, deps.witness !== undefined)}`,
  );
  const witnessOk = witnessed === undefined || witnessed.verdict === 'PASS';
  return result.verdict.converged && witnessOk ? ExitCode.ok : ExitCode.failure;
}

/** The witness's lines of the report: its summary and record, and each violation with its routing. */
export function renderWitness(witnessed: WitnessResult | undefined, asked: boolean): string {
  if (!asked) return '';
  if (witnessed === undefined) return 'witness: no spec-loop run recorded here; no claim to witness\n';
  const lines = [`${witnessed.summary} (record ${witnessed.record_path})`];
  for (const v of witnessed.violations) lines.push(`  ✗ ${v.violation} → ${v.routing}`);
  return `${lines.join('\n')}\n`;
}

/** The human report: what was run and measured, then the verdict and each unmet term. */
export function renderVerify(
  result: VerifyProjectResult,
  ledger: LedgerFacts,
  args: Pick<VerifyArgs, 'noWeed'>,
): string {
  const { tests, structure, questions, verdict } = result;
  const lines = [`tests: \`${tests.command.command}\` (${tests.command.reason})`];
  if (tests.counts.kind === 'known') {
    const { passed, failed, skipped, parser } = tests.counts;
    lines.push(
      `tests: ${String(passed)} passed, ${String(failed)} failed, ${String(skipped)} skipped (read by ${parser})`,
    );
  } else {
    lines.push(`tests: counts: unknown — ${tests.counts.reason}; exit code ${String(tests.exitCode)}`);
  }
  if (tests.timedOut) lines.push('tests: TIMED OUT; the process tree was killed');
  lines.push(`tests: output in ${tests.outputPath}`);
  const reference =
    structure.reference.status === 'ran'
      ? `reference ${structure.reference.binary}`
      : 'reference CLI not available';
  lines.push(
    structure.specFiles.length === 0
      ? 'spec: no .allium files found'
      : `spec: ${String(structure.specFiles.length)} file(s), ${String(structure.errors)} error(s), ${String(structure.warnings)} warning(s) (engine; ${reference})`,
  );
  for (const diagnostic of structure.diagnostics.filter((d) => d.severity === 'error')) {
    const { file, line, col } = diagnostic.location;
    lines.push(
      `  ${file}:${String(line)}:${String(col)} error ${diagnostic.code ?? '-'} ${diagnostic.message} [${diagnostic.source}]`,
    );
  }
  lines.push(
    `open questions: ${String(questions.blocking.length)} blocking, ${String(questions.parked.length)} parked`,
  );
  lines.push(args.noWeed ? 'weed: not required (--no-weed)' : `weed: ${ledger.weed.status} (${ledger.note})`);
  lines.push(
    result.harness === undefined
      ? 'harness: no recorded fingerprint (no run here); the test command was discovered'
      : `harness: ${String(result.harness.entries)} entries compared with ${result.harness.source}, ${String(result.harness.changed.length)} changed`,
  );
  if (verdict.converged) return `${lines.join('\n')}\nconverged\n`;
  return `${lines.join('\n')}\nnot converged:\n${verdict.unmet.map((term) => `  ✗ ${term.message}`).join('\n')}\n`;
}

function toJson(result: VerifyProjectResult, ledger: LedgerFacts, policy: InvariantPolicy) {
  const { tests, structure, questions, observation, verdict } = result;
  return {
    converged: verdict.converged,
    unmet: verdict.unmet,
    policy,
    observation,
    tests: {
      command: tests.command,
      counts: tests.counts,
      cases: tests.cases,
      exitCode: tests.exitCode,
      timedOut: tests.timedOut,
      durationMs: tests.durationMs,
      outputPath: tests.outputPath,
    },
    structure: {
      specFiles: structure.specFiles,
      errors: structure.errors,
      warnings: structure.warnings,
      diagnostics: structure.diagnostics,
      reference: structure.reference,
    },
    openQuestions: questions,
    weed: { ...ledger.weed, note: ledger.note },
    harness: result.harness ?? null,
  };
}

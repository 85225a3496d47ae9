import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { AlliumLoopError, formatError } from '@allium-loop/errors';
import type { CliIo } from '../cli-io.js';
import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';

/** The synopsis, shared with the command table. */
export const MERGE_LEDGERS_SYNOPSIS = 'merge-ledgers --plan <file> [--out <file>] [--json] <ledger files…>';

const HELP = [
  `Usage: allium-loop ${MERGE_LEDGERS_SYNOPSIS}`,
  '',
  "Rolls the ledgers of a plan's slice runs (run --slice <id> --plan <file>, one per CI job) up into one report:",
  'each slice as it ended (or interrupted, or missing), questions deduplicated, costs and calls summed, and',
  'whether the goal converged. Nothing is changed: the inputs are only read.',
  '',
  'Options:',
  '  --plan FILE   The plan file the slices ran (plan --plan-out).',
  '  --out FILE    Also write the merged ledger (a new file, never one of the inputs).',
  "  --json        Print the roll-up and each slice's condition as JSON.",
  '  -h, --help    Show this help.',
  '',
  'Exits 0 when every slice and the integration pass converged, 1 otherwise or on a bad input, 2 on a usage error.',
  '',
].join('\n');

interface MergeArgs {
  readonly plan: string;
  readonly out: string | undefined;
  readonly json: boolean;
  readonly files: readonly string[];
}

function parseMergeArgs(args: readonly string[], cwd: string): MergeArgs | 'help' | string {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...args],
      options: {
        plan: { type: 'string' },
        out: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    return (error as Error).message;
  }
  const { values, positionals } = parsed;
  if (values.help === true) return 'help';
  if (values.plan === undefined || values.plan.trim() === '') return '--plan <file> is required';
  if (positionals.length === 0) return 'name the slice ledgers to merge';
  if (values.out?.trim() === '') return '--out needs a file name';
  const files = positionals.map((file) => resolve(cwd, file));
  const plan = resolve(cwd, values.plan);
  const out = values.out === undefined ? undefined : resolve(cwd, values.out);
  if (out !== undefined && (files.includes(out) || out === plan))
    return `--out ${values.out!} is one of the inputs; write the merged ledger to a new file`;
  return { plan, out, json: values.json === true, files };
}

async function runMerge(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseMergeArgs(args, io.cwd);
  if (parsed === 'help') {
    io.stdout(HELP);
    return ExitCode.ok;
  }
  if (typeof parsed === 'string') {
    io.stderr(`allium-loop merge-ledgers: ${parsed}.\nRun 'allium-loop merge-ledgers --help' for usage.\n`);
    return ExitCode.usage;
  }
  try {
    const { mergeSliceLedgers, readLedgerFile, readStoredPlan, writeLedgerFile } =
      await import('@allium-loop/orchestrator');
    const plan = await readStoredPlan(parsed.plan);
    const inputs = [];
    for (const source of parsed.files) inputs.push({ source, ledger: await readLedgerFile(source) });
    const merged = mergeSliceLedgers(plan, inputs, new Date());
    if (parsed.out !== undefined) await writeLedgerFile(parsed.out, merged.ledger);
    if (parsed.json) {
      io.stdout(
        `${JSON.stringify({ plan: plan.id, rollUp: merged.rollUp, slices: merged.slices }, null, 2)}\n`,
      );
    } else {
      const { renderReport } = await import('../render/render-report.js');
      const conditions = merged.slices
        .filter((slice) => slice.condition !== 'ended')
        .map((slice) =>
          slice.condition === 'missing'
            ? `  ${slice.id}: no ledger given (its job did not run or left no artifact)`
            : `  ${slice.id}: interrupted — its ledger was left mid-run (${slice.source ?? ''}); run that job again`,
        );
      const totals = merged.rollUp.totals;
      io.stdout(
        [
          renderReport(merged.ledger),
          `Roll-up of plan ${plan.id}: ${merged.rollUp.status}, ${String(totals.converged)}/${String(totals.slices)} converged over ${String(totals.ticks)} tick(s), tests ${String(totals.testsPassed)} passed / ${String(totals.testsFailed)} failed, $${totals.costUsd.toFixed(2)}`,
          ...conditions,
          ...merged.rollUp.parkedQuestions.map((q) => `  parked: ${q.text}`),
          '',
        ].join('\n'),
      );
    }
    return merged.rollUp.converged ? ExitCode.ok : ExitCode.failure;
  } catch (error) {
    if (!AlliumLoopError.is(error)) throw error;
    io.stderr(`allium-loop merge-ledgers: ${formatError(error)}\n`);
    return ExitCode.failure;
  }
}

/** `allium-loop merge-ledgers --plan <file> <ledgers…>`: the roll-up of a plan's slice runs (CI matrix jobs). */
export function mergeLedgersCommand(): Command {
  return {
    name: 'merge-ledgers',
    synopsis: MERGE_LEDGERS_SYNOPSIS,
    summary: "Roll the slice ledgers of a plan's CI jobs up into one report.",
    run: runMerge,
  };
}

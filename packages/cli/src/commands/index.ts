import type { Command } from '../command.js';
import { demoCommand } from './demo.js';
import { planCommand } from './plan.js';
import { resumeModeCommand, runModeCommand } from './run-modes.js';
import { resumeCommand, runCommand } from './run.js';
import { answerCommand, listCommand, reportCommand, statusCommand } from './runs.js';
import { specCommand } from './spec.js';
import { readLedgerFacts, readRecordedHarness } from './ledger-facts.js';
import { verifyCommand } from './verify.js';

/** Every subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly Command[] = [
  runCommand((args, io) => runModeCommand(args, io)),
  resumeCommand((args, io) => resumeModeCommand(args, io)),
  statusCommand(),
  answerCommand(),
  planCommand(),
  verifyCommand({ readLedgerFacts: (cwd) => readLedgerFacts(cwd), readHarness: readRecordedHarness }),
  specCommand,
  listCommand(),
  reportCommand(),
  demoCommand(),
];

import type { Command } from '../command.js';
import { demoCommand } from './demo.js';
import { planCommand } from './plan.js';
import { resumeCommand, runCommand } from './run.js';
import { answerCommand, listCommand, reportCommand, statusCommand } from './runs.js';
import { specCommand } from './spec.js';
import { verifyCommand } from './verify.js';

/** Every subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly Command[] = [
  runCommand(),
  resumeCommand(),
  statusCommand(),
  answerCommand(),
  planCommand(),
  verifyCommand(),
  specCommand,
  listCommand(),
  reportCommand(),
  demoCommand(),
];

import type { Command } from '../command.js';
import { notAvailable } from './not-available.js';
import { planCommand } from './plan.js';
import { specCommand } from './spec.js';
import { verifyCommand } from './verify.js';

/** Every subcommand, in the order `--help` lists them. */
export const COMMANDS: readonly Command[] = [
  notAvailable('run', 'run "<goal>" [options]', 'Drive a goal to convergence against the spec.'),
  notAvailable('resume', 'resume <slug> [options]', 'Continue a run from its ledger in a fresh process.'),
  notAvailable('status', 'status [slug] [--json]', 'Show where a run stands.'),
  notAvailable(
    'answer',
    'answer <slug> <question-id> "<answer>"',
    'Answer an escalated question, then resume.',
  ),
  planCommand(),
  verifyCommand(),
  specCommand,
  notAvailable('list', 'list [--json]', 'List the runs recorded in this project.'),
  notAvailable('report', 'report <slug> [--html out.html]', 'Print the report of a run.'),
  notAvailable('demo', 'demo', 'Run the loop on the bundled example with the replay agent.'),
];

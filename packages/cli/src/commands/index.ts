import type { Command } from '../command.js';
import { renderRunHelp } from './run-flags.js';

/**
 * Every subcommand, in the order `--help` lists them. Each is loaded only when it runs (a dynamic import), so
 * `allium-loop --version` and `--help` load nothing but this table; the bundle splits each command into its own
 * chunk. The names, synopses and summaries here must equal the loaded commands' own (a test compares them).
 */
export const COMMANDS: readonly Command[] = [
  lazy(
    {
      name: 'run',
      synopsis: 'run "<goal>" [options]',
      summary: 'Drive a goal to convergence against the spec.',
      usage: renderRunHelp('run'),
    },
    async () => (await import('./run.js')).runCommand(),
  ),
  lazy(
    {
      name: 'resume',
      synopsis: 'resume <slug> [options]',
      summary: 'Continue a run from its ledger in a fresh process.',
      usage: renderRunHelp('resume'),
    },
    async () => (await import('./run.js')).resumeCommand(),
  ),
  lazy(
    {
      name: 'status',
      synopsis: 'status [slug] [--json]',
      summary: 'Show where a run stands.',
      usage: usage(
        'status [slug] [--json]',
        'Without a slug, lists the runs (like list). With a slug, prints its report, or the whole ledger with --json.',
      ),
    },
    async () => (await import('./runs.js')).statusCommand(),
  ),
  lazy(
    {
      name: 'answer',
      synopsis: 'answer <slug> <question-id> "<answer>"',
      summary: 'Answer an escalated question, then resume.',
      usage: usage(
        'answer <slug> <question-id> "<answer>"',
        "Records the answer to an escalated question (ids are in the run's report). Then 'allium-loop resume <slug>'\nwrites it into the spec and carries on.",
      ),
    },
    async () => (await import('./runs.js')).answerCommand(),
  ),
  lazy(
    {
      name: 'plan',
      synopsis:
        'plan [--goal "..."] [--since <rev>] [--json | --mermaid | --github-matrix [--wave N]] [--plan-out <file>]',
      summary: 'Show the decomposition into slices without running.',
    },
    async () => (await import('./plan.js')).planCommand(),
  ),
  lazy(
    {
      name: 'merge-ledgers',
      synopsis: 'merge-ledgers --plan <file> [--out <file>] [--json] <ledger files…>',
      summary: "Roll the slice ledgers of a plan's CI jobs up into one report.",
    },
    async () => (await import('./merge-ledgers.js')).mergeLedgersCommand(),
  ),
  lazy(
    {
      name: 'verify',
      synopsis: 'verify [--json] [--no-weed] [--strict-questions]',
      summary: 'Evaluate the convergence invariant now (a CI gate).',
    },
    async () => {
      const [{ verifyCommand }, { readLedgerFacts, readRecordedHarness, witnessLatestRun }] =
        await Promise.all([import('./verify.js'), import('./ledger-facts.js')]);
      return verifyCommand({
        readLedgerFacts: (cwd) => readLedgerFacts(cwd),
        readHarness: readRecordedHarness,
        witness: witnessLatestRun,
      });
    },
  ),
  lazy(
    {
      name: 'spec',
      synopsis: 'spec check|analyse|model|plan|graph|questions [paths]',
      summary:
        'Built-in spec tooling: diagnostics, findings, domain model, test obligations, graph, open questions.',
    },
    async () => (await import('./spec.js')).specCommand,
  ),
  lazy(
    {
      name: 'list',
      synopsis: 'list [--json]',
      summary: 'List the runs recorded in this project.',
      usage: usage(
        'list [--json]',
        'Lists every run in .allium-loop/ (a corrupt ledger is listed as such, never rewritten).',
      ),
    },
    async () => (await import('./runs.js')).listCommand(),
  ),
  lazy(
    {
      name: 'report',
      synopsis: 'report <slug> [--html [--out <file>] [--open]]',
      summary: 'Print the report of a run, or write it as one HTML file.',
      usage: usage(
        'report <slug> [--html [--out <file>] [--open]]',
        "Prints a run's report from its ledger; --html writes it as one self-contained HTML file (--out names the\nfile, --open opens it in the default viewer).",
      ),
    },
    async () => {
      const [{ reportCommand }, { openInViewer }] = await Promise.all([
        import('./report.js'),
        import('../render/open-in-viewer.js'),
      ]);
      return reportCommand({ open: (path) => openInViewer(path) });
    },
  ),
  lazy(
    {
      name: 'stats',
      synopsis: 'stats [--json]',
      summary: 'Convergence metrics over the runs of this project (see docs/metrics.md).',
      usage: usage(
        'stats [--json]',
        'Convergence metrics over the runs recorded in .allium-loop/ (see docs/metrics.md); --json prints them as JSON.',
      ),
    },
    async () => (await import('./stats.js')).statsCommand(),
  ),
  lazy(
    {
      name: 'demo',
      synopsis: 'demo [--json | --quiet]',
      summary: 'Run the loop on the bundled example with the replay agent.',
      usage: [
        'Usage: allium-loop demo [--json | --quiet]',
        '',
        'Copies the bundled lending-desk example into a fresh git repository in the temporary directory and runs the',
        'real loop on it, with the replay agent playing a recorded script: real test runs, real checks, a real ledger;',
        'no API key or network needed.',
        '',
        '  --json   print the journal events as NDJSON on stdout (nothing else on stdout)',
        '  --quiet  print only the final report',
        '',
      ].join('\n'),
    },
    async () => (await import('./demo.js')).demoCommand(),
  ),
];

function usage(synopsis: string, text: string): string {
  return `Usage: allium-loop ${synopsis}\n\n${text}\n`;
}

/** A command whose module is imported on first use; `load` is exposed so a test can compare the metadata. */
export interface LazyCommand extends Command {
  readonly load: () => Promise<Command>;
}

function lazy(meta: Omit<Command, 'run'>, load: () => Promise<Command>): LazyCommand {
  return { ...meta, load, run: async (args, io) => (await load()).run(args, io) };
}

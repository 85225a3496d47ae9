import type { Command } from './command.js';

/** Renders the top-level help: usage, one line per command, and the global flags. */
export function renderHelp(commands: readonly Command[]): string {
  const width = Math.max(...commands.map((command) => command.synopsis.length));
  const lines = commands.map((command) => `  ${command.synopsis.padEnd(width)}  ${command.summary}`);
  return [
    'allium-loop — drive a coding agent to convergence on a goal against an Allium spec.',
    '',
    'Usage: allium-loop <command> [options]',
    '',
    'Commands:',
    ...lines,
    '',
    'Options:',
    "  -h, --help     Show this help (or a command's help: allium-loop <command> --help).",
    '  -v, --version  Print the version.',
    '',
    'Exit codes: 0 ok/converged, 1 failure, 2 usage error; run states 3–7 and 130 (see docs/cli.md).',
    '',
  ].join('\n');
}

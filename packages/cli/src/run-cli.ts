import { parseArgs } from 'node:util';
import { createRedactor } from '@allium-loop/ledger';
import type { CliIo } from './cli-io.js';
import type { Command } from './command.js';
import { COMMANDS } from './commands/index.js';
import { ExitCode } from './exit-codes.js';

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

/**
 * Parses the command line and dispatches to a command. Returns the exit code; never exits the process.
 * `argv` excludes the node binary and the script path.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  options: { readonly version: string; readonly commands?: readonly Command[] },
): Promise<number> {
  return dispatchAll(argv, redactingIo(io), options);
}

/**
 * The CLI's output passes through the redactor: whatever a command prints (echoed goals and test commands,
 * reports, errors quoting agent output) carries no secret of the environment, nor one shaped like a key.
 */
function redactingIo(io: CliIo): CliIo {
  const redactor = createRedactor(io.env);
  return {
    ...io,
    stdout: (text) => io.stdout(redactor.text(text)),
    stderr: (text) => io.stderr(redactor.text(text)),
  };
}

async function dispatchAll(
  argv: readonly string[],
  io: CliIo,
  options: { readonly version: string; readonly commands?: readonly Command[] },
): Promise<number> {
  const commands = options.commands ?? COMMANDS;
  const first = argv[0];
  if (first === undefined || !first.startsWith('-') || first === '--') {
    return dispatch(first, argv.slice(1), io, commands);
  }
  const parsed = parseGlobal(argv, io);
  if (parsed === undefined) return ExitCode.usage;
  if (parsed.version) {
    io.stdout(`allium-loop ${options.version}\n`);
    return ExitCode.ok;
  }
  io.stdout(renderHelp(commands));
  return ExitCode.ok;
}

function parseGlobal(argv: readonly string[], io: CliIo): { version: boolean } | undefined {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: { help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
      strict: true,
      allowPositionals: false,
    });
    return { version: values.version === true };
  } catch (error) {
    io.stderr(`allium-loop: ${(error as Error).message}\nRun 'allium-loop --help' for usage.\n`);
    return undefined;
  }
}

async function dispatch(
  name: string | undefined,
  rest: readonly string[],
  io: CliIo,
  commands: readonly Command[],
): Promise<number> {
  if (name === undefined) {
    io.stderr(renderHelp(commands));
    return ExitCode.usage;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (command === undefined) {
    io.stderr(`allium-loop: unknown command '${name}'.\nRun 'allium-loop --help' to see the commands.\n`);
    return ExitCode.usage;
  }
  return command.run(rest, io);
}

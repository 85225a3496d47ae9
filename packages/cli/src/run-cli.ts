import { parseArgs } from 'node:util';
import type { CliIo } from './cli-io.js';
import type { Command } from './command.js';
import { COMMANDS } from './commands/index.js';
import { dispatch, redactingIo } from './dispatch.js';
import { ExitCode } from './exit-codes.js';
import { renderHelp } from './render-help.js';

export { renderHelp };

/**
 * Parses the command line and dispatches to a command. Returns the exit code; never exits the process.
 * `argv` excludes the node binary and the script path.
 */
export async function runCli(
  argv: readonly string[],
  io: CliIo,
  options: { readonly version: string; readonly commands?: readonly Command[] },
): Promise<number> {
  // --version and --help print fixed text: answered before the redactor (and the ledger package) is loaded.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
    io.stdout(`allium-loop ${options.version}\n`);
    return ExitCode.ok;
  }
  if (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h')) {
    io.stdout(renderHelp(options.commands ?? COMMANDS));
    return ExitCode.ok;
  }
  return dispatchAll(argv, await redactingIo(io), options);
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

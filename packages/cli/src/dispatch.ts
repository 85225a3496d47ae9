import type { CliIo } from './cli-io.js';
import type { Command } from './command.js';
import { ExitCode } from './exit-codes.js';
import { renderHelp } from './render-help.js';

/**
 * Runs the command called `name` among `commands` with the rest of the command line: its usage when it has one and
 * `-h`/`--help` comes before any `--`, the top-level help on stderr when no command is named, exit 2 for an unknown
 * name. Shared by both composition roots (`run-cli.ts` for every command, `spec-main.ts` for `spec` alone), so a
 * command answers the same whichever loaded it.
 */
export async function dispatch(
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
  if (command.usage !== undefined && asksForHelp(rest)) {
    io.stdout(command.usage);
    return ExitCode.ok;
  }
  return command.run(rest, io);
}

/**
 * The CLI's output passes through the redactor: whatever a command prints (echoed goals and test commands,
 * reports, errors quoting agent output) carries no secret of the environment, nor one shaped like a key.
 */
export async function redactingIo(io: CliIo): Promise<CliIo> {
  // The redactor alone (no imports of its own): loading the whole ledger package (zod, schemas) here would cost
  // every command its start-up time.
  const { createRedactor } = await import('@allium-loop/ledger/redact');
  const redactor = createRedactor(io.env);
  // Every other field as it is, copied as a property rather than read: `signal` is a getter that makes its
  // AbortController when first read (process-io.ts), which `spec` never does.
  const field = <T>(value: T): PropertyDescriptor => ({
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return Object.defineProperties(
    {},
    {
      ...Object.getOwnPropertyDescriptors(io),
      stdout: field((text: string) => io.stdout(redactor.text(text))),
      stderr: field((text: string) => io.stderr(redactor.text(text))),
    },
  ) as CliIo;
}

/** Whether `-h` or `--help` comes before any `--` (after which every argument is a value). */
function asksForHelp(args: readonly string[]): boolean {
  const end = args.indexOf('--');
  return (end === -1 ? args : args.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

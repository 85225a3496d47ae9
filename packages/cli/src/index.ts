/**
 * allium-loop — the command-line application. `main.ts` is the executable; this entry exposes the testable core.
 */
export { createRecordingIo, type CliIo, type RecordingIo } from './cli-io.js';
export type { Command } from './command.js';
export { COMMANDS } from './commands/index.js';
export { ExitCode } from './exit-codes.js';
export { renderHelp, runCli } from './run-cli.js';

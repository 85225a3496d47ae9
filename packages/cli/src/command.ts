import type { CliIo } from './cli-io.js';

/** A subcommand of `allium-loop`: a name, a one-line summary, and a function `(args, io) → exit code`. */
export interface Command {
  readonly name: string;
  /** Usage synopsis shown by `--help`, e.g. `run "<goal>" [options]`. */
  readonly synopsis: string;
  /** One line shown in the command list. */
  readonly summary: string;
  /**
   * The command's full `--help` text. When present, `<command> --help` prints it and exits 0 without running (or
   * even loading) the command; when absent the command answers `--help` itself.
   */
  readonly usage?: string;
  /** Runs the command with the arguments after its name. Never calls `process.exit`. */
  readonly run: (args: readonly string[], io: CliIo) => Promise<number>;
}

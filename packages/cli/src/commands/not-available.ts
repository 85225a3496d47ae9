import type { Command } from '../command.js';
import { ExitCode } from '../exit-codes.js';

/**
 * A command that is designed but not built yet. It says so plainly and exits 2 instead of pretending to work.
 */
export function notAvailable(name: string, synopsis: string, summary: string): Command {
  return {
    name,
    synopsis,
    summary,
    run: async (_args, io) => {
      io.stderr(`allium-loop ${name}: not available yet in this version.\n`);
      return ExitCode.usage;
    },
  };
}

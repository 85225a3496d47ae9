import { runProcess } from '@allium-loop/agents';
import { createRedactor } from '@allium-loop/ledger';

/** What the user's verification command did. */
export interface UserCommandResult {
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly durationMs: number;
  /** Stdout then stderr, each bounded to its head and tail, redacted (it goes into prompts and the journal). */
  readonly output: string;
}

/** How to run the user's command. */
export interface UserCommandOptions {
  readonly command: string;
  readonly cwd: string;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

const LIMITS = { headBytes: 32 * 1024, tailBytes: 64 * 1024, maxLineBytes: 1024 * 1024 };

/**
 * Runs the command the user configured (`--verify`) with `/bin/sh -c` in the project, in its own process group,
 * with the user's environment (colour off, `CI=1`), a time limit and the run's abort signal. Only this
 * user-written command is ever run through a shell; nothing an agent wrote is. Throws when the shell cannot start.
 */
export async function runUserCommand(options: UserCommandOptions): Promise<UserCommandResult> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env)) if (value !== undefined) env[name] = value;
  const result = await runProcess({
    file: '/bin/sh',
    args: ['-c', options.command],
    cwd: options.cwd,
    env: { ...env, FORCE_COLOR: '0', CI: '1' },
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    killGraceMs: 2_000,
    capture: LIMITS,
  });
  return {
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    aborted: result.aborted,
    durationMs: result.durationMs,
    output: createRedactor(options.env).text(
      [joinSnapshot(result.stdout), joinSnapshot(result.stderr)].filter((s) => s.length > 0).join('\n'),
    ),
  };
}

function joinSnapshot(snapshot: { head: string; tail: string; omittedBytes: number }): string {
  if (snapshot.omittedBytes === 0) return snapshot.head + snapshot.tail;
  return `${snapshot.head}\n… ${String(snapshot.omittedBytes)} bytes omitted …\n${snapshot.tail}`;
}

/** The last lines of an output, at most `maxChars` characters, for prompts and the journal. */
export function outputTail(output: string, maxChars = 2_000): string {
  return output.length <= maxChars ? output : `…${output.slice(output.length - maxChars)}`;
}

/**
 * Everything a command may touch of the outside world besides its own ports. `main.ts` builds the real one from
 * `process`; tests pass a recording fake.
 */
export interface CliIo {
  /** Writes to standard output (no newline added). */
  readonly stdout: (text: string) => void;
  /** Writes to standard error (no newline added). */
  readonly stderr: (text: string) => void;
  /** The working directory the command acts on. */
  readonly cwd: string;
  /** The environment; read, never written. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Whether stdout is an interactive terminal. */
  readonly isTTY: boolean;
  /** The terminal's width in columns, when stdout is one (the status line is cut to it). */
  readonly columns?: () => number | undefined;
  /** Aborted on Ctrl-C / SIGTERM; long-running commands stop cleanly when it fires. */
  readonly signal?: AbortSignal;
  /** Asks the user one question on the terminal; absent when not interactive. Resolves `undefined` on EOF. */
  readonly prompt?: (question: string) => Promise<string | undefined>;
  /** How to run this CLI again from any directory (`allium-loop` when that is on PATH, else `node /path/…`). */
  readonly self?: () => string;
  /** Milliseconds since the epoch; the real clock in main.ts. */
  readonly now?: () => number;
}

/** A {@link CliIo} that records output, for tests. */
export interface RecordingIo extends CliIo {
  readonly out: () => string;
  readonly err: () => string;
}

/** Builds a {@link RecordingIo} rooted at `cwd`. */
export function createRecordingIo(cwd: string, env: Record<string, string | undefined> = {}): RecordingIo {
  let out = '';
  let err = '';
  return {
    stdout: (text) => {
      out += text;
    },
    stderr: (text) => {
      err += text;
    },
    cwd,
    env,
    isTTY: false,
    out: () => out,
    err: () => err,
  };
}

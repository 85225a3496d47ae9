import { fstatSync, realpathSync, statSync, writeSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { formatError } from '@allium-loop/errors';
import type { CliIo } from './cli-io.js';

// The process boundary: the only module that reads process.argv, writes to the console, handles signals or sets
// the exit code (before it runs, only the bin shim answers `--version`, and the spec loader, spec-loader.ts, reads its
// own variable and may report on its code cache). Both composition roots run through it: `main.ts` (every command)
// and `spec-main.ts` (`spec` alone, which the bin shim loads so a big spec check does not pay for the whole CLI's
// start-up).

/** How {@link runAsProcess} writes a command's output (see there). */
export type ProcessOutput = 'streams' | 'descriptors';

/** What {@link runAsProcess} leaves to its caller once the command has run. */
export interface ProcessEnd {
  /** Whether output written so far is still waiting in Node to be handed to the operating system. */
  readonly outputPending: () => boolean;
}

/**
 * Runs `run` on the command line (without the node binary and script path) and a {@link CliIo} built from this
 * process, and sets the exit code to what it returns; an error it throws is printed as `allium-loop: …`, exit 1.
 * `prompt` is offered to commands when both stdin and stdout are terminals (main.ts passes one; `spec` asks nothing,
 * and its bundle in the npm package runs where a dynamic `import()` is not available).
 *
 * `output` is how stdout and stderr are written: through Node's `process.stdout` and `process.stderr` streams
 * (`streams`, the default: main.ts, for `run` and every other command, where a reader that stops reading must not
 * stop the engine), or by {@link descriptorWriter}s (`descriptors`, spec-main.ts: each write returns once the
 * operating system has all of it, and Node never builds those streams).
 */
export async function runAsProcess(
  run: (argv: readonly string[], io: CliIo) => Promise<number>,
  options: { readonly prompt?: CliIo['prompt']; readonly output?: ProcessOutput } = {},
): Promise<ProcessEnd> {
  const direct = options.output === 'descriptors';
  const streamsBuilt = direct ? watchStreams() : () => true;
  const stdout = direct ? descriptorWriter(1) : quietWhenClosed(process.stdout);
  const stderr = direct ? descriptorWriter(2) : quietWhenClosed(process.stderr);
  // Made when the command first asks for its signal, or a signal comes first: `spec` never asks, and Node loads the
  // module behind AbortController on first use (2 ms of an empty spec's check, tools/bench/spec/README.md).
  let abort: AbortController | undefined;
  const controller = (): AbortController => (abort ??= new AbortController());
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    signals += 1;
    // The first Ctrl-C cancels cleanly (children killed, ledger intact); a second one exits at once.
    if (signals > 1) quitAtOnce(signal, onSignal);
    stderr('\nallium-loop: cancelling (Ctrl-C again to quit at once)…\n');
    controller().abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  // Only when there is a prompt to offer: Node builds process.stdin when it is first read, and for a file or a terminal
  // that loads its file streams with fs/promises and readline, which `spec` (no prompt) never needs.
  const interactive =
    options.prompt !== undefined && process.stdin.isTTY === true && process.stdout.isTTY === true;
  try {
    process.exitCode = await run(process.argv.slice(2), {
      stdout,
      stderr,
      cwd: process.cwd(),
      env: process.env,
      isTTY: direct ? descriptorIsTerminal(1) : process.stdout.isTTY === true,
      columns: () => process.stdout.columns,
      self,
      get signal() {
        return controller().signal;
      },
      now: () => Date.now(),
      ...(interactive && options.prompt !== undefined ? { prompt: options.prompt } : {}),
    });
  } catch (error) {
    stderr(`allium-loop: ${formatError(error)}\n`);
    process.exitCode = 1;
  }
  return {
    outputPending: () =>
      streamsBuilt() && (process.stdout.writableLength > 0 || process.stderr.writableLength > 0),
  };
}

/**
 * Ends the process at once on a second SIGINT or SIGTERM. `process.exit` would run the `exit` listeners and then
 * wait for Node's thread pool, which never finishes a read that never completes (a FIFO nobody writes to, a hung
 * network file system): the second Ctrl-C would hang too. So the `exit` listeners run here (they kill any agent's
 * process group, agents/process-group.ts), then the handlers are taken off and the signal raised again: the kernel
 * ends the process as the signal's default action would have (a shell reports 130 for Ctrl-C). If the signal does not
 * end it (another listener for it), it exits with 130, its `exit` listeners already run.
 */
function quitAtOnce(signal: NodeJS.Signals, handler: (signal: NodeJS.Signals) => void): never {
  process.exitCode = 130;
  process.emit('exit', 130);
  process.removeAllListeners('exit');
  process.removeListener('SIGINT', handler);
  process.removeListener('SIGTERM', handler);
  process.kill(process.pid, signal);
  process.exit(130);
}

/**
 * Writes to the file descriptor `fd` with `fs.writeSync`, never through `process.stdout` or `process.stderr`: Node
 * builds those streams, with the stream and network modules they need, when they are first read, which cost a
 * one-shot `spec` check 7 ms of start-up and 1 MB (tools/bench/spec/README.md, ninth pass). Each call returns once the
 * operating system has all of `text`, so a big report is never held in memory while a slow reader catches up, and
 * nothing waits to be written when the process ends. A descriptor that another process made non-blocking (a socket
 * it shares) answers EAGAIN when it is full: the writer waits a millisecond and tries again. A reader that went away
 * (EPIPE) ends the output quietly there, as {@link quietWhenClosed} does for a stream.
 */
function descriptorWriter(fd: number): (text: string) => void {
  let closed = false;
  return (text) => {
    if (closed || text === '') return;
    const bytes = Buffer.from(text, 'utf8');
    let written = 0;
    while (written < bytes.length) {
      try {
        written += writeSync(fd, bytes, written, bytes.length - written);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'EPIPE') {
          closed = true;
          return;
        }
        if (code !== 'EAGAIN') throw error;
        Atomics.wait(PAUSE, 0, 0, 1);
      }
    }
  };
}

/** What {@link descriptorWriter} waits on for a millisecond (nothing ever wakes it). */
const PAUSE = new Int32Array(new SharedArrayBuffer(4));

/**
 * Whether `fd` is a terminal, without the tty module (which loads the network streams): only a character device can
 * be one, /dev/null (where a script sends what it does not read) is not, and for any other Node's own stream answers.
 */
function descriptorIsTerminal(fd: 1): boolean {
  try {
    const stat = fstatSync(fd);
    if (!stat.isCharacterDevice()) return false;
    const devNull = statSync('/dev/null');
    if (stat.dev === devNull.dev && stat.ino === devNull.ino) return false;
  } catch {
    return false;
  }
  return process.stdout.isTTY === true;
}

/**
 * Reports whether anything has read `process.stdout` or `process.stderr` (which builds them) since it was called: a
 * Node warning, say, is printed through `process.stderr` even when the command's own output is not. Node defines both
 * as getters that build the stream the first time; each is wrapped to note that. Were either not such a getter, it
 * answers `true` from the start.
 */
function watchStreams(): () => boolean {
  let built = false;
  for (const name of ['stdout', 'stderr'] as const) {
    const descriptor = Object.getOwnPropertyDescriptor(process, name);
    const get = descriptor?.get;
    if (descriptor?.configurable !== true || get === undefined) {
      built = true;
      continue;
    }
    Object.defineProperty(process, name, {
      ...descriptor,
      get(): unknown {
        built = true;
        return get.call(process);
      },
    });
  }
  return () => built;
}

/**
 * A reader that went away (`allium-loop run … | head -1`) closes the pipe: writes then fail with EPIPE. The output
 * ends quietly there and the run carries on to its terminal state, so the ledger is never left "running".
 */
function quietWhenClosed(stream: NodeJS.WriteStream): (text: string) => void {
  let closed = false;
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE' || error.code === 'ERR_STREAM_DESTROYED') closed = true;
    else throw error;
  });
  return (text) => {
    if (!closed) stream.write(text);
  };
}

/**
 * `allium-loop` when that name on the user's PATH is this very program; otherwise `node <this script>`. Under
 * `npx`/`npm exec` the PATH holds npm's temporary additions, which the user's shell will not have.
 */
function self(): string {
  const script = process.argv[1] === undefined ? '' : realpathSync(process.argv[1]);
  if (process.env['npm_command'] === 'exec') return `node ${script}`;
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    try {
      if (dir !== '' && realpathSync(join(dir, 'allium-loop')) === script) return 'allium-loop';
    } catch {
      // not in this directory
    }
  }
  return `node ${script}`;
}

import { realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { formatError } from '@allium-loop/errors';
import type { CliIo } from './cli-io.js';

// The process boundary: the only module that reads process.argv, writes to the console, handles signals or sets
// the exit code (before it runs, only the bin shim answers `--version`, and the spec loader, spec-loader.ts, reads its
// own variable and may report on its code cache). Both composition roots run through it: `main.ts` (every command)
// and `spec-main.ts` (`spec` alone, which the bin shim loads so a big spec check does not pay for the whole CLI's
// start-up).

/**
 * Runs `run` on the command line (without the node binary and script path) and a {@link CliIo} built from this
 * process, and sets the exit code to what it returns; an error it throws is printed as `allium-loop: …`, exit 1.
 * `prompt` is offered to commands when both stdin and stdout are terminals (main.ts passes one; `spec` asks nothing,
 * and its bundle in the npm package runs where a dynamic `import()` is not available). `writeThrough` (spec-main.ts)
 * makes stdout and stderr {@link writeThrough} streams.
 */
export async function runAsProcess(
  run: (argv: readonly string[], io: CliIo) => Promise<number>,
  options: { readonly prompt?: CliIo['prompt']; readonly writeThrough?: boolean } = {},
): Promise<void> {
  const abort = new AbortController();
  let signals = 0;
  const onSignal = (): void => {
    signals += 1;
    // The first Ctrl-C cancels cleanly (children killed, ledger intact); a second one exits at once.
    if (signals > 1) process.exit(130);
    process.stderr.write('\nallium-loop: cancelling (Ctrl-C again to quit at once)…\n');
    abort.abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  // Only when there is a prompt to offer: Node builds process.stdin when it is first read, and for a file or a terminal
  // that loads its file streams with fs/promises and readline, which `spec` (no prompt) never needs.
  const interactive =
    options.prompt !== undefined && process.stdin.isTTY === true && process.stdout.isTTY === true;
  if (options.writeThrough === true) {
    writeThrough(process.stdout);
    writeThrough(process.stderr);
  }
  const stdout = quietWhenClosed(process.stdout);
  const stderr = quietWhenClosed(process.stderr);
  try {
    process.exitCode = await run(process.argv.slice(2), {
      stdout,
      stderr,
      cwd: process.cwd(),
      env: process.env,
      isTTY: process.stdout.isTTY === true,
      columns: () => process.stdout.columns,
      self,
      signal: abort.signal,
      now: () => Date.now(),
      ...(interactive && options.prompt !== undefined ? { prompt: options.prompt } : {}),
    });
  } catch (error) {
    stderr(`allium-loop: ${formatError(error)}\n`);
    process.exitCode = 1;
  }
}

/**
 * Makes `stream`'s writes return only once the text has been handed to the operating system, when it is a pipe
 * (a terminal and a file are written that way already). Node otherwise keeps what a pipe cannot take yet in memory
 * until its reader catches up: a one-shot command that prints a 2 MB report in pieces (`spec check --json big.allium
 * | jq`) then holds most of it at once, 6 MB more peak memory at 50k lines (tools/bench/spec/README.md). Not for
 * `run`: a reader that stops reading would then stop the engine, its caps included.
 */
export function writeThrough(stream: NodeJS.WriteStream): void {
  // `setBlocking` is what Node itself calls to make a terminal's writes synchronous; a pipe's handle has it too.
  const handle = (stream as { _handle?: { setBlocking?: (blocking: boolean) => number } })._handle;
  if (!stream.isTTY) handle?.setBlocking?.(true);
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

import { spawn } from 'node:child_process';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { AgentBinaryNotFoundError, AgentSpawnError } from './agent-errors.js';
import { BoundedCapture, type CaptureSnapshot } from './bounded-capture.js';
import { LineSplitter } from './line-splitter.js';
import { terminateProcessGroup, trackProcessGroup } from './process-group.js';
import { killCallProcesses, newCallMarker, PROCESS_MARKER } from './process-marker.js';

/** Memory limits of one call's output capture. */
export interface CaptureLimits {
  /** Bytes kept from the start of each stream. */
  readonly headBytes: number;
  /** Bytes kept from the end of each stream. */
  readonly tailBytes: number;
  /** Longest stdout line handed to the output parser; longer lines are skipped. */
  readonly maxLineBytes: number;
}

/** Defaults: 256 KiB head, 1 MiB tail (a CLI's final report comes last), 8 MiB lines. */
export const DEFAULT_CAPTURE_LIMITS: CaptureLimits = {
  headBytes: 256 * 1024,
  tailBytes: 1024 * 1024,
  maxLineBytes: 8 * 1024 * 1024,
};

/**
 * The longest delay a Node timer can wait (2^31 - 1 ms, about 24.8 days); a longer one fires after 1 ms. Call
 * limits above it are refused by the CLI and clamped here.
 */
export const MAX_TIMEOUT_MS = 2_147_483_647;

/** One process to run with {@link runProcess}. */
export interface ProcessRunOptions {
  readonly file: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** The complete environment of the child; nothing of the engine's own is added. */
  readonly env: Readonly<Record<string, string>>;
  /** Written to the child's stdin, which is then closed; without it stdin is empty. */
  readonly stdin?: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL when the tree is ended. */
  readonly killGraceMs: number;
  readonly capture: CaptureLimits;
  /** Called with each complete stdout line as it arrives. */
  readonly onStdoutLine?: (line: string) => void;
  /** Named in the error when the executable is missing. */
  readonly installHint?: string;
}

/** How a process ended and what it printed (bounded). */
export interface ProcessRunResult {
  readonly pid: number | undefined;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly durationMs: number;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  readonly stdout: CaptureSnapshot;
  readonly stderr: CaptureSnapshot;
  /** Stdout lines too long to hand to the parser. */
  readonly skippedLines: number;
}

const EMPTY: CaptureSnapshot = { head: '', tail: '', totalBytes: 0, omittedBytes: 0 };

/** How long the output of processes killed at a timeout or abort may take to drain before the pipes are closed. */
const DRAIN_AFTER_KILL_MS = 5_000;

/**
 * How often the call's marked processes are swept again while its pipes stay open after it exited. `/proc` shows a
 * process in the middle of an `exec` with an empty environment (measured here: about one read in forty of processes
 * that were exec'ing in a loop), so one sweep can miss a daemon that holds the pipes; under a busy CI machine it did,
 * and the call waited for its whole timeout.
 */
const SWEEP_AGAIN_MS = 250;

/**
 * Runs one executable in its own process group with a minimal environment, a wall-clock limit and an abort
 * signal, capturing stdout and stderr in bounded memory. Every process it starts carries the call's marker
 * (`ALLIUM_LOOP_CALL`, see `process-marker.ts`). On timeout or abort the whole group gets SIGTERM and, after
 * `killGraceMs`, SIGKILL; processes the child leaves behind after it exits are ended the same way, and so is every
 * process carrying the marker, including one that left the group (`setsid`). The output is read to its end of
 * file, so nothing the child printed before it exited is lost; a process that escaped with a scrubbed environment
 * and still holds the pipe is cut off at the timeout. When the promise resolves, no marked process is left.
 *
 * Throws {@link AgentBinaryNotFoundError} when `file` is not on the child's PATH and {@link AgentSpawnError}
 * when the process cannot start for another reason (missing `cwd`, permissions). A non-zero exit is a result,
 * not an error.
 */
export async function runProcess(options: ProcessRunOptions): Promise<ProcessRunResult> {
  await assertDirectory(options.cwd);
  const started = Date.now();
  if (options.signal?.aborted === true) return notStarted(started);
  const stdout = new BoundedCapture(options.capture.headBytes, options.capture.tailBytes);
  const stderr = new BoundedCapture(options.capture.headBytes, options.capture.tailBytes);
  const lines = new LineSplitter((line) => options.onStdoutLine?.(line), options.capture.maxLineBytes);
  const marker = newCallMarker();

  const child = spawn(options.file, [...options.args], {
    cwd: options.cwd,
    env: { ...options.env, [PROCESS_MARKER]: marker },
    detached: true,
    stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  const spawned = new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', (error) => resolve(error));
  });
  const spawnFailure = await spawned;
  if (spawnFailure !== undefined) {
    await killCallProcesses(marker, options.killGraceMs);
    throw spawnError(spawnFailure, options);
  }
  const pid = child.pid!;
  const untrack = trackProcessGroup(pid, marker);
  if (options.stdin !== undefined && child.stdin !== null) {
    // A child that exits without reading its stdin closes the pipe: EPIPE is not our error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.stdin);
  }
  const out = child.stdout!;
  const err = child.stderr!;
  out.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    lines.push(chunk);
  });
  err.on('data', (chunk: Buffer) => stderr.push(chunk));
  const outputEnded = Promise.all([streamEnd(out), streamEnd(err)]);

  const ending = { timedOut: false, aborted: false };
  let killing: Promise<void> | undefined;
  const endTree = (): Promise<void> => {
    killing ??= Promise.all([
      terminateProcessGroup(pid, options.killGraceMs),
      killCallProcesses(marker, options.killGraceMs),
    ]).then(() => undefined);
    return killing;
  };
  let cutOff: () => void = () => undefined;
  const limitReached = new Promise<void>((resolve) => (cutOff = resolve));
  const stopAll = (): void => {
    void endTree().then(() => setTimeout(cutOff, DRAIN_AFTER_KILL_MS).unref());
  };
  const timer = setTimeout(
    () => {
      ending.timedOut = true;
      stopAll();
    },
    Math.min(Math.max(options.timeoutMs, 0), MAX_TIMEOUT_MS),
  );
  const onAbort = (): void => {
    ending.aborted = true;
    stopAll();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    const exit = await new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    // Anything the child left running, in its group or escaped from it with the marker, is ended too; then the
    // pipes reach their end of file (or, if an unmarked escapee holds them, the call's limit cuts them off).
    await endTree();
    const sweeping = sweepWhile(outputEnded, limitReached, () =>
      killCallProcesses(marker, options.killGraceMs),
    );
    await Promise.race([outputEnded, limitReached]);
    await sweeping;
    out.destroy();
    err.destroy();
    lines.end();
    return {
      pid,
      exitCode: exit.code,
      signal: exit.signal,
      durationMs: Date.now() - started,
      timedOut: ending.timedOut,
      aborted: ending.aborted && !ending.timedOut,
      stdout: stdout.snapshot(),
      stderr: stderr.snapshot(),
      skippedLines: lines.skippedLines,
    };
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    untrack();
  }
}

/**
 * Runs `sweep` every {@link SWEEP_AGAIN_MS} until `ended` or `cutOff` settles (and not after: the last sweep in
 * flight is awaited, no timer is left behind). Exported for its tests.
 */
export async function sweepWhile(
  ended: Promise<unknown>,
  cutOff: Promise<void>,
  sweep: () => Promise<unknown>,
): Promise<void> {
  let done = false;
  let wake: () => void = () => undefined;
  const stop = (): void => {
    done = true;
    wake();
  };
  void ended.then(stop);
  void cutOff.then(stop);
  while (!done) {
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      wake = resolve;
      timer = setTimeout(resolve, SWEEP_AGAIN_MS);
    });
    clearTimeout(timer);
    if (!done) await sweep();
  }
}

function streamEnd(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.readableEnded || stream.destroyed) resolve();
    stream.once('end', resolve);
    stream.once('close', resolve);
    stream.once('error', () => resolve());
  });
}

async function assertDirectory(cwd: string): Promise<void> {
  const info = await stat(cwd).catch((cause: unknown) => {
    throw new AgentSpawnError(`agent working directory ${cwd} does not exist`, {
      cause,
      retryable: false,
      context: { cwd },
    });
  });
  if (!info.isDirectory())
    throw new AgentSpawnError(`agent working directory ${cwd} is not a directory`, {
      retryable: false,
      context: { cwd },
    });
}

function notStarted(started: number): ProcessRunResult {
  return {
    pid: undefined,
    exitCode: null,
    signal: null,
    durationMs: Date.now() - started,
    timedOut: false,
    aborted: true,
    stdout: EMPTY,
    stderr: EMPTY,
    skippedLines: 0,
  };
}

function spawnError(error: Error, options: ProcessRunOptions): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT')
    return new AgentBinaryNotFoundError(
      options.file,
      options.installHint ?? `Install '${options.file}' or put it on PATH.`,
      error,
    );
  return new AgentSpawnError(`could not start agent '${options.file}' (${code ?? 'unknown error'})`, {
    cause: error,
    retryable: code === 'EAGAIN' || code === 'EMFILE' || code === 'ENFILE',
    context: { file: options.file, cwd: options.cwd, code },
  });
}

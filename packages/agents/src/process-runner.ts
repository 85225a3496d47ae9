import { stat } from 'node:fs/promises';
import { execa } from 'execa';
import { AgentBinaryNotFoundError, AgentSpawnError } from './agent-errors.js';
import { BoundedCapture, type CaptureSnapshot } from './bounded-capture.js';
import { LineSplitter } from './line-splitter.js';
import { terminateProcessGroup, trackProcessGroup } from './process-group.js';

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

/**
 * Runs one executable in its own process group with a minimal environment, a wall-clock limit and an abort
 * signal, capturing stdout and stderr in bounded memory. On timeout or abort the whole group gets SIGTERM and,
 * after `killGraceMs`, SIGKILL; processes the child leaves behind after it exits are ended the same way. When the
 * promise resolves, no process of the tree is left.
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

  const subprocess = execa(options.file, [...options.args], {
    cwd: options.cwd,
    env: { ...options.env },
    extendEnv: false,
    detached: true,
    reject: false,
    buffer: false,
    stripFinalNewline: false,
    ...(options.stdin === undefined ? { stdin: 'ignore' as const } : { input: options.stdin }),
  });
  const pid = subprocess.pid;
  const untrack = pid === undefined ? () => false : trackProcessGroup(pid);
  subprocess.stdout.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    lines.push(chunk);
  });
  subprocess.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));

  const ending = { timedOut: false, aborted: false, termination: undefined as Promise<void> | undefined };
  const endTree = (): void => {
    if (pid !== undefined && ending.termination === undefined)
      ending.termination = terminateProcessGroup(pid, options.killGraceMs);
  };
  const timer = setTimeout(() => {
    ending.timedOut = true;
    endTree();
  }, options.timeoutMs);
  const onAbort = (): void => {
    ending.aborted = true;
    endTree();
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });
  // Once the agent itself exits, anything it left running in its group is ended too.
  subprocess.once('exit', endTree);

  try {
    const result = await subprocess;
    await ending.termination;
    if (isSpawnFailure(result) && !ending.timedOut && !ending.aborted) throw spawnError(result, options);
    lines.end();
    return {
      pid,
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
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

interface SpawnOutcome {
  readonly failed: boolean;
  readonly exitCode?: number | undefined;
  readonly signal?: string | undefined;
  readonly code?: string | undefined;
  readonly cause?: unknown;
}

function isSpawnFailure(result: SpawnOutcome): boolean {
  return result.failed && result.exitCode === undefined && result.signal === undefined;
}

function spawnError(result: SpawnOutcome, options: ProcessRunOptions): Error {
  const code = result.code ?? (result.cause as { code?: string } | undefined)?.code;
  if (code === 'ENOENT')
    return new AgentBinaryNotFoundError(
      options.file,
      options.installHint ?? `Install '${options.file}' or put it on PATH.`,
      result,
    );
  return new AgentSpawnError(`could not start agent '${options.file}' (${code ?? 'unknown error'})`, {
    cause: result,
    retryable: code === 'EAGAIN' || code === 'EMFILE' || code === 'ENFILE',
    context: { file: options.file, cwd: options.cwd, code },
  });
}

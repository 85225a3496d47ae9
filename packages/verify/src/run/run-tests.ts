import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { runProcess, type CaptureSnapshot } from '@allium-loop/agents';
import { createRedactor } from '@allium-loop/ledger';
import { join } from 'node:path';
import { parseTestOutput } from '../parsers/parse-test-output.js';
import type { TestCommand, TestRunResult } from '../test-run.js';
import { VerifyError } from '../verify-error.js';

/** How to run a test command. */
export interface RunTestsOptions {
  readonly command: TestCommand;
  /** The project directory the command runs in. */
  readonly cwd: string;
  /** Where the output file (and the report, when one is asked for) are written; created when missing. */
  readonly outputDir: string;
  /** Kill the whole process tree after this long (default 10 minutes). */
  readonly timeoutMs?: number;
  /** After SIGTERM, wait this long before SIGKILL (default 2 s). */
  readonly killGraceMs?: number;
  /** Extra environment; the engine's own environment is inherited, with colour turned off and `CI=1`. */
  readonly env?: Readonly<Record<string, string>>;
  /** How much of the output is kept, in memory and on disk (default {@link DEFAULT_TEST_OUTPUT_LIMITS}). */
  readonly outputLimits?: TestOutputLimits;
}

/** The bytes of test output kept: the first `headBytes` and the last `tailBytes`; the middle is dropped. */
export interface TestOutputLimits {
  readonly headBytes: number;
  readonly tailBytes: number;
}

/** 1 MiB of the start (the first failures) and 4 MiB of the end (the runner's summary comes last). */
export const DEFAULT_TEST_OUTPUT_LIMITS: TestOutputLimits = {
  headBytes: 1024 * 1024,
  tailBytes: 4 * 1024 * 1024,
};

const DEFAULT_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_GRACE_MS = 2_000;

/**
 * Runs a test command with `sh -c` in its own process group (stdout and stderr interleaved), through the agents'
 * process runner: on timeout the whole group, and every process that carries the call's marker (a `setsid`
 * daemon included), gets SIGTERM, then SIGKILL after the grace period; after a normal exit whatever the tests
 * left behind is killed too. Only the first and last bytes of the output are kept (see `outputLimits`), with a
 * line saying how much was dropped between them; that text, redacted of secrets, is written to
 * `<outputDir>/test-output.log` and parsed. Counts that cannot be read are `unknown`, never guessed.
 *
 * Throws {@link VerifyError} `verify.spawn_failed` when the shell itself cannot be started.
 */
export async function runTests(options: RunTestsOptions): Promise<TestRunResult> {
  await mkdir(options.outputDir, { recursive: true });
  const outputPath = join(options.outputDir, 'test-output.log');
  const reportPath = reportFile(options);
  if (reportPath !== undefined) await rm(reportPath, { force: true });
  const commandLine = buildCommandLine(options.command, reportPath);
  const env = testEnv(options.env);
  const limits = options.outputLimits ?? DEFAULT_TEST_OUTPUT_LIMITS;
  const started = Date.now();
  const run = await runProcess({
    file: '/bin/sh',
    // The braces send the stderr of the whole command line, whatever it holds, into the one output stream.
    args: ['-c', `{ ${commandLine}\n} 2>&1`],
    cwd: options.cwd,
    env,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    killGraceMs: options.killGraceMs ?? DEFAULT_GRACE_MS,
    capture: { ...limits, maxLineBytes: 0 },
  }).catch((error: unknown) => {
    throw new VerifyError(`cannot start the test command: ${(error as Error).message}`, {
      code: 'verify.spawn_failed',
      cause: error,
    });
  });
  const durationMs = Date.now() - started;
  // Everything downstream (the log, parsed failure messages that reach prompts and the ledger) sees redacted text.
  const redactor = createRedactor(env);
  const output = redactor.text(joinCapture(run.stdout));
  await writeFile(outputPath, output);
  const report =
    reportPath === undefined ? undefined : await readReport(reportPath, options.command, redactor.text);
  const parsed = parseTestOutput(output, report);
  return {
    ...parsed,
    command: options.command,
    exitCode: run.timedOut ? null : run.exitCode,
    signal: run.signal,
    timedOut: run.timedOut,
    durationMs,
    outputPath,
    ...(report === undefined ? {} : { reportPath: reportPath! }),
  };
}

/** The kept text of a capture, with a line naming what was dropped between its head and its tail. */
function joinCapture(capture: CaptureSnapshot): string {
  if (capture.omittedBytes === 0) return capture.head + capture.tail;
  const cut = capture.head.endsWith('\n') ? '' : '\n';
  return `${capture.head}${cut}[allium-loop: ${String(capture.omittedBytes)} bytes of output omitted here]\n${capture.tail}`;
}

/** The engine's environment (set values only) with colour off and `CI=1`, then the caller's extras. */
function testEnv(extra: Readonly<Record<string, string>> | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined) env[name] = value;
  return { ...env, FORCE_COLOR: '0', CI: '1', ...extra };
}

/** The command line actually run: the command plus its report option, with `{file}` filled in. */
export function buildCommandLine(command: TestCommand, reportPath: string | undefined): string {
  if (command.report === undefined || reportPath === undefined) return command.command;
  return `${command.command}${command.report.option.replaceAll('{file}', shellQuote(reportPath))}`;
}

function reportFile(options: RunTestsOptions): string | undefined {
  const format = options.command.report?.format;
  if (format === undefined) return undefined;
  return join(options.outputDir, format === 'junit' ? 'test-report.xml' : 'test-report.json');
}

/** Reads the runner's report, redacts it and writes the redacted text back (it lives under `.allium-loop/`). */
async function readReport(path: string, command: TestCommand, redact: (text: string) => string) {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  const redacted = redact(text);
  if (redacted !== text) await writeFile(path, redacted);
  return { format: command.report!.format, text: redacted };
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

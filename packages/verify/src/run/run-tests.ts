import { spawn } from 'node:child_process';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
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
}

const DEFAULT_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_GRACE_MS = 2_000;

/**
 * Runs a test command with `sh -c` in its own process group, with its output (stdout and stderr interleaved)
 * written to `<outputDir>/test-output.log`, then parses the counts. On timeout the whole group gets SIGTERM,
 * then SIGKILL after the grace period; after a normal exit any process the tests left behind in the group is
 * killed too. Counts that cannot be read are `unknown`, never guessed.
 *
 * Throws {@link VerifyError} `verify.spawn_failed` when the shell itself cannot be started.
 */
export async function runTests(options: RunTestsOptions): Promise<TestRunResult> {
  await mkdir(options.outputDir, { recursive: true });
  const outputPath = join(options.outputDir, 'test-output.log');
  const reportPath = reportFile(options);
  if (reportPath !== undefined) await rm(reportPath, { force: true });
  const commandLine = buildCommandLine(options.command, reportPath);
  const started = Date.now();
  const exit = await spawnInGroup(commandLine, outputPath, options);
  const durationMs = Date.now() - started;
  const output = await readFile(outputPath, 'utf8');
  const report = reportPath === undefined ? undefined : await readReport(reportPath, options.command);
  const parsed = parseTestOutput(output, report);
  return {
    ...parsed,
    command: options.command,
    exitCode: exit.code,
    signal: exit.signal,
    timedOut: exit.timedOut,
    durationMs,
    outputPath,
    ...(report === undefined ? {} : { reportPath: reportPath! }),
  };
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

async function readReport(path: string, command: TestCommand) {
  try {
    return { format: command.report!.format, text: await readFile(path, 'utf8') };
  } catch {
    return undefined;
  }
}

interface Exit {
  readonly code: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
}

async function spawnInGroup(
  commandLine: string,
  outputPath: string,
  options: RunTestsOptions,
): Promise<Exit> {
  const file = await open(outputPath, 'w');
  try {
    const child = spawn('/bin/sh', ['-c', commandLine], {
      cwd: options.cwd,
      detached: true,
      stdio: ['ignore', file.fd, file.fd],
      env: { ...process.env, FORCE_COLOR: '0', CI: '1', ...options.env },
    });
    return await waitWithTimeout(child, options);
  } finally {
    await file.close();
  }
}

function waitWithTimeout(child: ReturnType<typeof spawn>, options: RunTestsOptions): Promise<Exit> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const graceMs = options.killGraceMs ?? DEFAULT_GRACE_MS;
  return new Promise((resolve, reject) => {
    let timedOut = false;
    let hardKill: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid, 'SIGTERM');
      hardKill = setTimeout(() => killGroup(child.pid, 'SIGKILL'), graceMs);
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(
        new VerifyError(`cannot start the test command: ${error.message}`, {
          code: 'verify.spawn_failed',
          cause: error,
        }),
      );
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (hardKill !== undefined) clearTimeout(hardKill);
      // Whatever the tests left running in the group (servers, watchers) goes with them.
      killGroup(child.pid, 'SIGKILL');
      resolve({ code: timedOut ? null : code, signal, timedOut });
    });
  });
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

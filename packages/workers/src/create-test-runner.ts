import { runTests, type TestCommand } from '@allium-loop/verify';
import { join } from 'node:path';
import type { ObservedTestCase, ObservedTestRun, TestRunner } from './worker-ports.js';

/** How the engine runs the project's tests for a worker. */
export interface TestRunnerOptions {
  /** The project's test command (from `discoverTestCommand`); test files are appended to it. */
  readonly command: TestCommand;
  /** Where run output goes, e.g. `<root>/.allium-loop/<slug>/test-runs`; one subfolder per file set. */
  readonly outputDir: string;
  readonly timeoutMs?: number;
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

// `node --test` reports a file that declares no test as one passing "test" named after the file.
function isFileWrapper(name: string, files: readonly string[]): boolean {
  return files.some((file) => name === file || name.endsWith(`/${file}`));
}

/**
 * The {@link TestRunner} over `@allium-loop/verify`'s `runTests`: runs the test command with the given files
 * appended (every common runner — vitest, jest, `node --test`, pytest — takes files that way) and reports the
 * per-test cases. `collected` is false when the runner's output could not be read or named no test; a passing
 * "case" that is just the file's own path (how `node --test` reports a file without tests) does not count. A file
 * the runner could not load is a failed case marked `loadError` (so is every file, when the command fails with
 * output the engine cannot read).
 */
export function createTestRunner(options: TestRunnerOptions): TestRunner {
  return {
    async runFiles({ cwd, files }): Promise<ObservedTestRun> {
      const command = {
        ...options.command,
        command: [options.command.command, ...files.map(shellQuote)].join(' '),
      };
      const folder = files
        .join('+')
        .replace(/[^\w.-]+/g, '_')
        .slice(0, 120);
      const run = await runTests({
        command,
        cwd,
        outputDir: join(options.outputDir, folder),
        ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
      });
      const total =
        run.counts.kind === 'known' ? run.counts.passed + run.counts.failed + run.counts.skipped : 0;
      const cases: ObservedTestCase[] = run.cases
        .filter((c) => c.loadError === true || !isFileWrapper(c.name, files))
        .map((c) => ({
          name: c.name,
          status: c.status,
          ...(c.message === undefined ? {} : { message: c.message }),
          ...(c.loadError === true ? { loadError: true } : {}),
        }));
      if (cases.length === 0 && run.counts.kind === 'unknown' && run.exitCode !== 0 && !run.timedOut) {
        // The runner failed and printed nothing we can read (mocha on an import error, an unknown runner):
        // the files did not load. Red, never "no tests".
        cases.push(
          ...files.map((file) => ({
            name: file,
            status: 'failed' as const,
            loadError: true,
            message: `the test command exited ${String(run.exitCode)} without a result the engine can read (output: ${run.outputPath})`,
          })),
        );
      }
      return {
        collected: cases.length > 0 || (run.cases.length === 0 && total > 0),
        exitCode: run.exitCode,
        cases,
      };
    },
  };
}

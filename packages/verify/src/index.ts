/**
 * @allium-loop/verify — the verification harness: the engine runs the tests and checks the spec itself.
 */
export { discoverTestCommand, NO_TEST_COMMAND_HINT } from './discovery/discover-test-command.js';
export {
  CONFIG_FILE,
  readTestCommandConfig,
  writeTestCommandConfig,
} from './discovery/test-command-config.js';
export { parseTestOutput, type TestReport } from './parsers/parse-test-output.js';
export { buildCommandLine, runTests, type RunTestsOptions } from './run/run-tests.js';
export type {
  ParsedTestOutput,
  TestCase,
  TestCommand,
  TestCounts,
  TestReportRequest,
  TestRunResult,
} from './test-run.js';
export { VerifyError } from './verify-error.js';

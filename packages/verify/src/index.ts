/**
 * @allium-loop/verify — the verification harness: the engine runs the tests and checks the spec itself.
 */
export { discoverTestCommand, NO_TEST_COMMAND_HINT } from './discovery/discover-test-command.js';
export {
  CONFIG_FILE,
  readHarnessConfig,
  readTestCommandConfig,
  type HarnessConfig,
  writeTestCommandConfig,
} from './discovery/test-command-config.js';
export { parseTestOutput, type TestReport } from './parsers/parse-test-output.js';
export { findAllium } from './reference-cli/find-allium.js';
export type { ReferenceFinding, ReferenceReport } from './reference-cli/reference-output.js';
export {
  runReferenceCheck,
  runReferenceDocument,
  type ReferenceCheckResult,
  type ReferenceCliOptions,
  type ReferenceDocumentResult,
  type ReferenceNotAvailable,
} from './reference-cli/run-reference-cli.js';
export { splitJsonDocuments, type SplitJsonResult } from './reference-cli/split-json-documents.js';
export { buildCommandLine, runTests, type RunTestsOptions } from './run/run-tests.js';
export {
  checkStructure,
  mergeDiagnostics,
  type CheckStructureOptions,
  type ReferenceStatus,
  type SourcedDiagnostic,
  type StructureReport,
} from './structure/check-structure.js';
export { findSpecFiles } from './structure/find-spec-files.js';
export {
  classifyOpenQuestions,
  collectOpenQuestions,
  type ClassifiedQuestions,
  type OpenQuestion,
} from './structure/open-questions.js';
export type {
  ParsedTestOutput,
  TestCase,
  TestCommand,
  TestCounts,
  TestReportRequest,
  TestRunResult,
} from './test-run.js';
export { VerifyError } from './verify-error.js';
export {
  toTestTerm,
  verifyProject,
  type HarnessVerdict,
  type VerifyProjectOptions,
  type VerifyProjectResult,
} from './verify-project.js';
export * from './harness/index.js';
export * from './probe/index.js';

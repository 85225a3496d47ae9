/**
 * @allium-loop/workers — one worker per phase: prompt, result contract, claim verification and anti-cheat guards.
 */
export { applyReverts, type RevertOutcome } from './apply-reverts.js';
export { assemblePrompt, type AssembledPrompt, type PromptSpec } from './assemble-prompt.js';
export {
  checkClaims,
  declaredCoverage,
  declaresTestNaming,
  generatedTestPaths,
  namedFiles,
  significantChanges,
  sliceObligations,
  type ClaimEvidence,
  type ClaimFailure,
} from './check-claims.js';
export {
  countSuppressions,
  countTestMarkers,
  hasSuppression,
  testStrength,
  type TestMarkerCounts,
  type TestStrength,
} from './count-test-markers.js';
export { createSpecReader } from './create-spec-reader.js';
export { createTestRunner, type TestRunnerOptions } from './create-test-runner.js';
export { describeViolation } from './describe-violation.js';
export {
  detectViolations,
  isAllowedTestChange,
  isNamedByRequest,
  type AllowedTestChange,
  type FileSnapshot,
  type GuardInput,
  type GuardReport,
  type GuardViolation,
  type HarnessChange,
  type ProtectedTest,
  type RevertAction,
  type WorkspaceSnapshot,
} from './detect-violations.js';
export { findSuppressions, newSuppressions, type SpecSuppression } from './find-suppressions.js';
export { parseLegacyResult, parseLoopRecord, parseWorkerResult } from './parse-result.js';
export { findPrintedRecord, type PrintedRecord } from './printed-record.js';
export type {
  FailingTest,
  LoopMode,
  ParkedQuestion,
  PhaseContext,
  PreviousVerdict,
  StructuralError,
  TendRequest,
} from './phase-context.js';
export { mergeProtectedTests, protectedStoreDir, recordProtectedTests } from './protect-tests.js';
export {
  classifyRedCheck,
  testHasAssertion,
  type RedCheckClass,
  type RedCheckReport,
  type RedCheckRoute,
  type RedCheckVerdict,
} from './red-check.js';
export { loadTemplate, renderTemplate, templatePlaceholders } from './render-template.js';
export { loopRecordPath, resultFilePath } from './result-file-path.js';
export {
  DistillResultSchema,
  DivergenceSchema,
  ElicitResultSchema,
  ImplementResultSchema,
  LoopRecordSchema,
  OpenQuestionClaimSchema,
  PropagateResultSchema,
  RESULT_SCHEMAS,
  renderLoopRecordJsonSchema,
  renderResultJsonSchema,
  TendResultSchema,
  UncoveredObligationSchema,
  UPSTREAM_SCHEMA_FILES,
  WeedResultSchema,
  type AnyPhaseResult,
  type DistillResult,
  type Divergence,
  type ElicitResult,
  type ImplementResult,
  type LoopRecord,
  type OpenQuestionClaim,
  type PhaseResult,
  type PropagateResult,
  type TendResult,
  type WeedResult,
} from './result-schemas.js';
export {
  directNeighbours,
  selectSliceExcerpt,
  type SliceSelection,
  type SpecExcerpt,
} from './select-slice-excerpt.js';
export { runWorker } from './run-worker.js';
export { splitDeclarations, type SpecDeclaration, type SplitSpec } from './split-declarations.js';
export { classifyProjectPath, isTestPath, sha256, takeSnapshot } from './take-snapshot.js';
export { WorkerError } from './worker-error.js';
export type {
  ConstructDiff,
  ObservedTestCase,
  ObservedTestRun,
  SpecOpenQuestion,
  SpecReader,
  SpecReading,
  SpecSource,
  TestRunner,
  WorkerDeps,
} from './worker-ports.js';
export { WORKER_PHASES, type WorkerPhase } from './worker-phase.js';
export type { PhaseFailureReason, WorkerEvent, WorkerOutcome } from './worker-types.js';

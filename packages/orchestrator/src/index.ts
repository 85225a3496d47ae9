/**
 * @allium-loop/orchestrator — the tick: a pure `decide(state, observation)` and the driver that carries it out.
 */
export { TERMINAL_EXIT_CODES, type TerminalState } from './terminal-state.js';
export * from './decide/index.js';
export { formatTickLine, formatUsd } from './driver/format-tick-line.js';
export { readLoopState } from './driver/ledger-sync.js';
export type {
  Clock,
  LoopPorts,
  MeasureReport,
  PhaseReport,
  PhaseRequest,
  PlannedSlice,
  WitnessClaim,
  WitnessReport,
  WitnessRequest,
} from './driver/loop-ports.js';
export { INTEGRATION, runLoop, type LoopProgress, type RunLoopOptions } from './driver/run-loop.js';
export {
  createGitSnapshots,
  gitCheckpoint,
  gitHead,
  gitRoot,
  gitWorkingTree,
  specSourcesAt,
  type GitSnapshots,
  type Snapshot as GitSnapshot,
} from './project/git.js';
export {
  blockingQuestionTexts,
  createProjectPorts,
  recordSpecBaseline,
  type ProjectPortsOptions,
} from './project/project-ports.js';
export { detectDrift, resetToCheckpoint, type Drift, type DriftPolicy } from './project/drift.js';
export { questionId } from './project/phase-context.js';
export {
  openStore,
  resumeRun,
  RunError,
  startRun,
  stateDir,
  type RunOutcome,
  type RunSettings,
} from './run-goal.js';
export { answerQuestion, type AnswerOutcome, type AnswerRequest } from './runs/answer-question.js';
export { witnessRecordedRun, type WitnessRecordedRunOptions } from './runs/witness-recorded-run.js';
export { witnessRecordPath } from './project/witness-gate.js';
export { canReopen, reopenRun, RESUMABLE_STATES } from './runs/reopen-run.js';
export {
  goalFromEvidence,
  inferGoal,
  type GoalEvidence,
  type InferGoalOptions,
  type InferredGoal,
} from './runs/infer-goal.js';
export {
  describeRun,
  listRuns,
  recordedLoop,
  runTicks,
  type RunCondition,
  type RunOverview,
  type UnreadableRun,
} from './runs/run-overview.js';
export * from './modes/index.js';
export { startSliceRun } from './run-goal.js';
export {
  findSlice,
  githubMatrix,
  parseStoredPlan,
  ScaleOutError,
  sliceKey,
  storePlan,
  type StoredPlan,
  type StoredSlice,
} from './scale-out/stored-plan.js';
export { sliceRunMark, type SliceRunMark } from './scale-out/slice-run.js';
export {
  mergeSliceLedgers,
  type MergedLedgers,
  type MergedSlice,
  type SliceLedgerInput,
} from './scale-out/merge-ledgers.js';
export {
  readLedgerFile,
  readStoredPlan,
  writeLedgerFile,
  writeStoredPlan,
} from './scale-out/scale-out-files.js';
export { branchPrefix, worktreeRoot } from './parallel/git-worktrees.js';

/**
 * @allium-loop/workers — one worker per phase: prompt, result contract, claim verification and anti-cheat guards.
 */
export { assemblePrompt, type AssembledPrompt, type PromptSpec } from './assemble-prompt.js';
export { parseWorkerResult } from './parse-result.js';
export type {
  FailingTest,
  LoopMode,
  ParkedQuestion,
  PhaseContext,
  PreviousVerdict,
  StructuralError,
  TendRequest,
} from './phase-context.js';
export { loadTemplate, renderTemplate, templatePlaceholders } from './render-template.js';
export { resultFilePath } from './result-file-path.js';
export {
  DistillResultSchema,
  DivergenceSchema,
  ElicitResultSchema,
  ImplementResultSchema,
  OpenQuestionClaimSchema,
  PropagateResultSchema,
  RESULT_SCHEMAS,
  renderResultJsonSchema,
  TendResultSchema,
  WeedResultSchema,
  type AnyPhaseResult,
  type DistillResult,
  type Divergence,
  type ElicitResult,
  type ImplementResult,
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
export { splitDeclarations, type SpecDeclaration, type SplitSpec } from './split-declarations.js';
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
export {
  WORKER_PHASES,
  type PhaseFailureReason,
  type WorkerOutcome,
  type WorkerPhase,
} from './worker-types.js';

/**
 * The loop modes of the engine family — `--verify` (with hill-climb), `--stories` and `--state-file` — sharing
 * the ledger, caps, lease, journal and reports with the spec loop.
 */
export { openTick, revertTick, tickEdits, type OpenTick, type TickEdits } from './climb-tick.js';
export type { AgentStep, ModeContext, ModeProgress, ModeStop } from './mode-context.js';
export {
  DEFAULT_LOOP_MODE,
  fillTemplate,
  LoopConfigSchema,
  readLoopConfig,
  scopeBudgetsFor,
  templateVariableName,
  type LoopConfig as AgentLoopConfig,
} from './loop-config.js';
export { ModeSession } from './mode-session.js';
export { runModeLoop, summarizeMode, type ModeSpec } from './mode-spec.js';
export {
  applyVerdict,
  changedCriteria,
  criteriaChecksums,
  nextStory,
  parsePrd,
  PrdSchema,
  readVerdict,
  serializePrd,
  UserStorySchema,
  type Prd,
  type StoryVerdict,
  type UserStory,
} from './prd.js';
export { isImprovement, parseScore, reachesTarget } from './parse-score.js';
export {
  ModeRunError,
  resumeModeRun,
  startModeRun,
  type ModeRunOutcome,
  type ModeRunSettings,
} from './run-mode.js';
export { runUserCommand, type UserCommandOptions, type UserCommandResult } from './run-user-command.js';
export {
  AlStateSchema,
  checkDoneClaim,
  initialAlState,
  parseAlState,
  serializeAlState,
  type AlState,
} from './state-file.js';
export {
  formatStateFileSummary,
  readAlState,
  runStateFileMode,
  stateFilePrompt,
  stateTempFile,
  type StateFileIteration,
  type StateFileModeConfig,
  type StateFileModeState,
} from './state-file-mode.js';
export { exitLines, formatStorySummary, progressEntry, storyCounts } from './story-report.js';
export {
  decideStories,
  endState as storyEndState,
  initialStoryProgram,
  type StoryAction,
  type StoryObservation,
  type StoryProgramState,
} from './story-program.js';
export {
  loadPrd,
  runStoryMode,
  type StoryIteration,
  type StoryModeConfig,
  type StoryModeState,
} from './story-mode.js';
export { formatTable, formatVerifySummary } from './verify-report.js';
export {
  runVerifyMode,
  type VerifyModeConfig,
  type VerifyModeState,
  type VerifyTickRecord,
} from './verify-mode.js';
export {
  abortableSleep,
  DEFAULT_RATE_LIMIT_WAIT_MS,
  waitForRateLimit,
  type RateLimitWait,
  type RateLimitWaitOptions,
} from '../driver/wait-for-rate-limit.js';

/**
 * @allium-loop/entry — decides where a run starts from the project state and the goal's intent. Pure.
 */
export { ENTRY_POINTS } from './entry-types.js';
export type {
  EntryDecision,
  EntryMode,
  EntryPoint,
  GoalClassification,
  GoalIntent,
  ProjectState,
} from './entry-types.js';
export { classifyGoal, normaliseGoal } from './classify-goal.js';
export { detectEntry, modeOf } from './detect-entry.js';
export { GOAL_CUES, type GoalCue } from './goal-cues.js';

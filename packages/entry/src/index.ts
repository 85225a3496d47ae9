/**
 * @allium-loop/entry — decides where a run starts from the project state and the goal's intent. Pure.
 */
export type { EntryDecision, EntryMode, EntryPoint, ProjectState } from './entry-types.js';

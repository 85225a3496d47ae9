/**
 * @allium-loop/workers — one worker per phase: prompt, result contract, claim verification and anti-cheat guards.
 */
export type { PhaseFailureReason, WorkerOutcome, WorkerPhase } from './worker-types.js';

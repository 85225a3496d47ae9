/**
 * @allium-loop/evaluator — decides convergence from the engine's own measurements. Pure: no I/O, no clock.
 */
export type { InvariantPolicy, Observation, TestTerm } from './observation.js';

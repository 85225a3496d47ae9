/**
 * @allium-loop/evaluator — decides convergence from the engine's own measurements. Pure: no I/O, no clock.
 */
export {
  DEFAULT_STALL_CAPS,
  detectStall,
  type FixAttempt,
  type StallCaps,
  type StallReason,
  type StallVerdict,
  type TickSummary,
} from './detect-stall.js';
export {
  evaluateInvariant,
  type InvariantVerdict,
  type UnmetTerm,
  type UnmetTermKind,
} from './evaluate-invariant.js';
export { fingerprint } from './fingerprint.js';
export {
  DEFAULT_POLICY,
  type InvariantPolicy,
  type Observation,
  type TestTerm,
  type WeedTerm,
} from './observation.js';
export { flatTicks, madeProgress, stallWarning, type TraceEntry } from './trace-stall.js';
export {
  EXPLAINED_UNCOVERED_REASONS,
  witness,
  type GeneratedTestHash,
  type UncoveredObligation,
  type WitnessCheck,
  type WitnessCheckName,
  type WitnessCheckResult,
  type WitnessEvidence,
  type WitnessResult,
  type WitnessViolation,
} from './witness.js';

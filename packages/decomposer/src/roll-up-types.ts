/** Where one slice (or the integration pass) stands: not started, running, or one of a run's terminal states. */
export type SliceStatus =
  | 'pending'
  | 'running'
  | 'converged'
  | 'max_ticks'
  | 'no_progress'
  | 'awaiting_input'
  | 'timed_out'
  | 'budget_exhausted'
  | 'cancelled'
  | 'failed';

/** The id the integration pass reports under in a roll-up. */
export const INTEGRATION_ID = 'integration';

/** What one slice's loop (or the integration pass, id {@link INTEGRATION_ID}) reported. */
export interface SliceReport {
  readonly sliceId: string;
  readonly status: SliceStatus;
  readonly ticks: number;
  readonly tests: { readonly passed: number; readonly failed: number };
  readonly costUsd: number;
  /** Texts of the open questions the slice parked (non-blocking), as written in the spec. */
  readonly parkedQuestions: readonly string[];
}

/** A parked question after de-duplication: its text as first seen, and every slice that parked it. */
export interface ConsolidatedQuestion {
  readonly text: string;
  readonly slices: readonly string[];
}

/** Whole-goal totals of a roll-up. */
export interface RollUpTotals {
  readonly slices: number;
  readonly converged: number;
  /** Slices pending or running. */
  readonly open: number;
  /** Slices that ended without converging. */
  readonly stopped: number;
  readonly ticks: number;
  readonly testsPassed: number;
  readonly testsFailed: number;
  readonly costUsd: number;
}

/** The summary of a decomposed goal: per-slice status, totals, parked questions, and overall convergence. */
export interface RollUp {
  readonly slices: readonly { readonly sliceId: string; readonly status: SliceStatus }[];
  readonly totals: RollUpTotals;
  readonly parkedQuestions: readonly ConsolidatedQuestion[];
  /** `converged` when every slice (and the integration pass, if planned) converged; `stopped` when any ended without. */
  readonly status: 'converged' | 'in_progress' | 'stopped';
  readonly converged: boolean;
}

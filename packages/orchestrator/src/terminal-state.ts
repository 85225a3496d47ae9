/**
 * How a run ends. Every state is reachable, recorded in the ledger, and maps to an exit code (see `docs/cli.md`).
 */
export type TerminalState =
  | 'converged'
  | 'max_ticks'
  | 'no_progress'
  | 'awaiting_input'
  | 'timed_out'
  | 'budget_exhausted'
  | 'cancelled'
  | 'failed';

/** The process exit code for each terminal state. */
export const TERMINAL_EXIT_CODES: Readonly<Record<TerminalState, number>> = {
  converged: 0,
  failed: 1,
  max_ticks: 3,
  no_progress: 4,
  awaiting_input: 5,
  timed_out: 6,
  budget_exhausted: 7,
  cancelled: 130,
};

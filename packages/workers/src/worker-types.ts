/** The phases a worker can run. */
export type WorkerPhase = 'elicit' | 'distill' | 'propagate' | 'tend' | 'weed' | 'implement';

/** Every phase, in the order a tick may run them. */
export const WORKER_PHASES: readonly WorkerPhase[] = [
  'elicit',
  'distill',
  'tend',
  'propagate',
  'implement',
  'weed',
];

/** Why a phase failed; each reason is journaled with its detail. */
export type PhaseFailureReason =
  | 'agent_failed'
  | 'no_result_file'
  | 'result_invalid'
  | 'claim_file_missing'
  | 'spec_unparseable'
  | 'tests_not_collected'
  | 'count_mismatch'
  | 'red_check_failed'
  | 'cheat_detected';

/** The verified outcome of one phase. `TResult` is the phase's parsed result file. */
export type WorkerOutcome<TResult> =
  | { readonly status: 'ok'; readonly result: TResult; readonly costUsd?: number }
  | {
      readonly status: 'failed';
      readonly reason: PhaseFailureReason;
      readonly detail: string;
      readonly costUsd?: number;
    };

import type { AgentRunResult } from '@allium-loop/agents';
import type { ObligationReconciliation } from '@allium-loop/allium';
import type { RevertOutcome } from './apply-reverts.js';
import type { ClaimFailure } from './check-claims.js';
import type { GuardViolation, ProtectedTest } from './detect-violations.js';
import type { RedCheckReport } from './red-check.js';
import type { LoopRecord, PhaseResult } from './result-schemas.js';
import type { WorkerPhase } from './worker-phase.js';

/** Why a phase failed; each reason is journaled with its detail. */
export type PhaseFailureReason =
  | 'agent_failed'
  | 'no_result_file'
  | 'result_invalid'
  | 'claim_file_missing'
  | 'spec_unparseable'
  | 'tests_not_collected'
  | 'count_mismatch'
  | 'coverage_unproven'
  | 'cheat_detected';

/**
 * A journal event a worker produced, in the ledger journal's shape minus `at`/`tick` (the orchestrator stamps
 * those when it appends): one `violation` per cheat, one `note` per failed claim.
 */
export type WorkerEvent =
  | {
      readonly type: 'violation';
      readonly kind: GuardViolation['kind'];
      readonly path?: string;
      readonly detail: string;
      readonly reverted: boolean;
    }
  | {
      readonly type: 'note';
      readonly message: string;
      readonly data: {
        readonly phase: WorkerPhase;
        readonly reason: PhaseFailureReason | 'test_change_allowed' | 'record_printed';
        readonly path?: string;
      };
    };

/** What every outcome carries, whatever the verdict. */
interface OutcomeBase<P extends WorkerPhase> {
  readonly phase: P;
  /** The agent call as its adapter reported it. */
  readonly agent: AgentRunResult;
  /** USD cost of the call, when known. */
  readonly costUsd?: number;
  /** Project-relative path of the result file the agent was asked to write. */
  readonly resultFile: string;
  /** Size of the prompt in UTF-8 bytes. */
  readonly promptBytes: number;
  readonly violations: readonly GuardViolation[];
  /** The revert actions carried out for the violations, and whether each worked. */
  readonly reverts: readonly RevertOutcome[];
  /** Every reason the phase failed, most serious first (empty when it succeeded). */
  readonly failures: readonly ClaimFailure[];
  /** Protected tests after the phase: propagate adds its test files; every other phase passes them through. */
  readonly protectedTests: readonly ProtectedTest[];
  readonly events: readonly WorkerEvent[];
  /**
   * propagate only: the engine's own reconciliation of the spec's obligations with the generated tests (the
   * `N obligations, M covered, K uncovered` line and what each test proved), when the spec reader derives them.
   */
  readonly reconciliation?: ObligationReconciliation;
  /**
   * distill and elicit: the behaviour constructs the spec diff added, changed or removed, measured by the engine
   * (a fresh distill that finds nothing new has 0).
   */
  readonly findings?: number;
  /** The engine-side record the agent wrote beside its result (open-question classification, coverage claims). */
  readonly loopRecord?: LoopRecord;
}

/** The verified outcome of one phase: `ok` only when the agent succeeded, every claim held and no guard fired. */
export type WorkerOutcome<P extends WorkerPhase = WorkerPhase> =
  | (OutcomeBase<P> & {
      readonly status: 'ok';
      readonly result: PhaseResult<P>;
      /** propagate only: how each new test behaved before implementation. */
      readonly redCheck?: RedCheckReport;
    })
  | (OutcomeBase<P> & {
      readonly status: 'failed';
      readonly reason: PhaseFailureReason;
      readonly detail: string;
      /** The parsed result, when it parsed but its claims did not hold. */
      readonly result?: PhaseResult<P>;
    });

import type { PortFailure } from '@allium-loop/ledger';
import type { Observation } from '@allium-loop/evaluator';
import type { TerminalState } from '../terminal-state.js';
import type {
  Divergence,
  LoopPhase,
  Reconciliation,
  TickVerdict,
  WitnessViolationRoute,
} from './loop-state.js';

/** What the phase should focus on, handed to its worker's prompt. */
export interface PhaseFocus {
  readonly failing?: readonly string[];
  readonly divergences?: readonly Divergence[];
  readonly answered?: readonly string[];
  readonly vacuous?: readonly string[];
  readonly reasons?: readonly string[];
  /** Decomposed runs: the slice this loop works on (its constructs only), or the integration pass. */
  readonly slice?: SliceFocus;
}

/** The slice a loop works on. */
export interface SliceFocus {
  readonly id: string;
  /** Graph node ids (`rule:X`, `entity:Y`, `surface:Z`). */
  readonly constructs: readonly string[];
  /** The integration pass: cross-slice tests over the data-flow chains between slices, and a whole-spec weed. */
  readonly integration: boolean;
  /** The integration pass: the decomposer's chains between slices (paths of construct ids) to test end to end. */
  readonly chains?: readonly (readonly string[])[];
}

/** The next thing the driver must do. */
export type LoopAction =
  | { readonly kind: 'phase'; readonly phase: LoopPhase; readonly focus: PhaseFocus }
  /** Run the tests propagate just generated, alone, before implementing. */
  | { readonly kind: 'red_check'; readonly tests: readonly string[] }
  /** Run the tests, the structural checks and count open questions. */
  | { readonly kind: 'measure' }
  /** Plan slices from what the first gather changed in the spec. */
  | { readonly kind: 'plan' }
  /** Run every slice as its own loop, then the integration pass. */
  | { readonly kind: 'run_slices' }
  /** Ask the user the blocking questions (interactive runs only). */
  | { readonly kind: 'ask'; readonly questions: readonly string[] }
  /** The convergence gate: run the engine's deterministic witness over ground truth (no model). */
  | { readonly kind: 'witness' }
  | { readonly kind: 'terminal'; readonly state: TerminalState; readonly reason: string };

/** Facts `decide` reports for the journal alongside its action. */
export type LoopEvent =
  | { readonly kind: 'tick_started'; readonly tick: number; readonly reasons: readonly string[] }
  | { readonly kind: 'tick_recorded'; readonly verdict: TickVerdict }
  | { readonly kind: 'phase_retry'; readonly phase: LoopPhase; readonly reason: string }
  | { readonly kind: 'red_check'; readonly vacuous: readonly string[]; readonly failing: readonly string[] }
  /** A test run measured the tree: after the implement rounds so far this tick (`round`, 0 when none ran). */
  | {
      readonly kind: 'tests_measured';
      readonly round: number;
      readonly counts?: { readonly passed: number; readonly failed: number; readonly skipped: number };
    }
  | {
      readonly kind: 'cap_reached';
      readonly cap: string;
      readonly detail: string;
      readonly limit: number;
      readonly value: number;
    };

/** What the driver observed after carrying out the last action. */
export type LoopObservation =
  /** The run starts or resumes; the driver passes the clock and money spent so far. */
  | { readonly kind: 'start' }
  | {
      readonly kind: 'phase_done';
      readonly phase: LoopPhase;
      readonly ok: boolean;
      readonly detail?: string;
      readonly costUsd?: number;
      /** Gather phases: the spec's construct inventory changed. */
      readonly specChanged?: boolean;
      /** Gather phases: ids of blocking questions the worker raised. */
      readonly blocking?: readonly string[];
      /** Gather phases: texts of the parked questions the worker reported (all of the spec's open ones). */
      readonly parked?: readonly string[];
      /** Distill: new findings this pass. */
      readonly distillNew?: number;
      /** Propagate: the test names generated. */
      readonly newTests?: readonly string[];
      /** Propagate: the engine's reconciliation of the spec's obligations with the generated tests. */
      readonly reconciliation?: Reconciliation;
      /** Implement: tests the implementer contests, with reasons. */
      readonly contested?: readonly string[];
      /** Weed: the divergences found. */
      readonly divergences?: readonly Divergence[];
    }
  | { readonly kind: 'red_checked'; readonly passing: readonly string[]; readonly failing: readonly string[] }
  | {
      readonly kind: 'measured';
      readonly measurement: Omit<Observation, 'weed' | 'distillNew'>;
      /** Hash of the working tree, for the repeated-action check. */
      readonly treeHash?: string;
    }
  | { readonly kind: 'answers'; readonly answered: readonly string[] }
  | { readonly kind: 'planned'; readonly slices: number }
  /** The slice loops and the integration pass ended; `terminal` is set when one of them did not converge. */
  | {
      readonly kind: 'slices_done';
      readonly terminal?: {
        readonly state: TerminalState;
        readonly reason: string;
      };
    }
  /**
   * The witness ran: its verdict, each violation with its routing, the tests its re-run saw failing, and the
   * generated tests the driver restored from the engine's copies because their hash had changed.
   */
  | {
      readonly kind: 'witnessed';
      readonly verdict: 'PASS' | 'FAIL' | 'INCONCLUSIVE';
      readonly summary: string;
      readonly violations: readonly WitnessViolationRoute[];
      readonly failing: readonly string[];
      readonly restored: readonly string[];
    }
  | { readonly kind: 'cancelled' }
  /** The wall-clock cap passed during an action, which the driver then aborted. */
  | { readonly kind: 'deadline'; readonly error?: PortFailure }
  /** An action failed for good; `error` keeps the port failure's code, hint and causes for the report. */
  | { readonly kind: 'failed'; readonly reason: string; readonly error?: PortFailure };

/** The clock and spend the driver measured, attached to every observation. */
export interface LoopMeter {
  readonly elapsedMs: number;
  /** Tokens the run's agent calls used so far, when the driver knows them. */
  readonly tokens?: number;
}

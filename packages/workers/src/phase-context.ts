import type { HarnessRecord } from '@allium-loop/verify';
import type { ProtectedTest } from './detect-violations.js';
import type { SliceSelection } from './select-slice-excerpt.js';

/** Which way the loop runs: from spec to code, or from existing code to a spec. */
export type LoopMode = 'spec-first' | 'code-first';

/** A test the engine saw fail, with the runner's message. */
export interface FailingTest {
  readonly name: string;
  readonly message?: string;
}

/** A structural error in the spec, as the engine's checks reported it. */
export interface StructuralError {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/** A divergence weed found, as the next agent is told about it. */
export interface VerdictDivergence {
  readonly construct: string;
  readonly classification: 'spec-bug' | 'code-bug' | 'aspirational' | 'intentional-gap';
  readonly description: string;
}

/** What the engine measured at the end of the previous tick, shown to the next agent. */
export interface PreviousVerdict {
  readonly failingTests: readonly FailingTest[];
  readonly divergences: readonly VerdictDivergence[];
  readonly structuralErrors: readonly StructuralError[];
  /** Red-check or claim failures the engine routed back to this phase, one line each. */
  readonly notes?: readonly string[];
}

/** An open question left in the spec under an assumption. */
export interface ParkedQuestion {
  readonly text: string;
  readonly assumption: string;
}

/** What tend is asked to do; the only way a construct may legitimately be removed from the spec. */
export interface TendRequest {
  readonly request: string;
  /** Construct ids (`rule:Name`, `field:Entity.f`) or names the request allows to be removed. */
  readonly removals?: readonly string[];
}

/** Everything a worker needs to know about the run to brief its agent. Paths are relative to `cwd`. */
export interface PhaseContext {
  /** The project root; the agent runs here. */
  readonly cwd: string;
  readonly slug: string;
  readonly tick: number;
  readonly goal: string;
  readonly mode: LoopMode;
  readonly slice?: SliceSelection;
  readonly paths: {
    readonly spec: readonly string[];
    readonly tests: readonly string[];
    readonly code: readonly string[];
  };
  readonly previousVerdict?: PreviousVerdict;
  readonly parkedQuestions: readonly ParkedQuestion[];
  /** Required for tend. */
  readonly tendRequest?: TendRequest;
  /** Generated tests recorded so far (from the ledger); empty before the first propagate. */
  readonly protectedTests?: readonly ProtectedTest[];
  /**
   * The run's harness record (what the test command runs or reads, fingerprinted at the start of the run): any
   * change to it during a phase is a violation and is restored. Its `allowTestChanges` lists the test paths the
   * user allows to be weakened.
   */
  readonly harness?: HarnessRecord;
  readonly timeoutMs: number;
  /** The engine's idempotency key for the agent call, passed through to the agent adapter. */
  readonly callKey?: string;
  readonly budgetUsd?: number;
  readonly signal?: AbortSignal;
}

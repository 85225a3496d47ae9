/**
 * The data one HTML report shows. The CLI builds it from the ledger, the journal and the run's files; this package
 * only renders it. Plain JSON: every field is already redacted by the caller.
 */
export interface ReportModel {
  readonly generatedAt: string;
  readonly run: RunSummary;
  readonly spend: SpendSummary;
  readonly caps: readonly CapRow[];
  /** Every measured tick of the run, in the order they ran: the run's own ticks and each slice loop's. */
  readonly ticks: readonly TickRow[];
  /** Why the uncovered-obligations column is empty when it is (the engine has no obligations record yet). */
  readonly obligationsNote: string | null;
  readonly slices: readonly SliceNode[];
  readonly phases: readonly PhaseSpan[];
  readonly witness: WitnessSummary | null;
  readonly questions: readonly QuestionRow[];
  readonly calls: readonly AgentCallRow[];
  /** Stall, cap and guard warnings, each tied to the tick it happened at. */
  readonly warnings: readonly WarningRow[];
  readonly verify: VerifyView | null;
  readonly stories: StoriesView | null;
}

/** How the run stands or ended. */
export interface RunSummary {
  readonly slug: string;
  readonly goal: string;
  readonly mode: string;
  readonly status: string;
  readonly terminal: { readonly state: string; readonly reason: string; readonly detail: string } | null;
  readonly entry: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** What the run consumed. `usd` is `null` while no call had a known cost; `unknownCalls > 0` makes it a lower bound. */
export interface SpendSummary {
  readonly usd: number | null;
  readonly unknownCalls: number;
  readonly agentCalls: number;
  readonly wallMs: number;
  readonly tokens: { readonly input: number; readonly output: number };
}

/** One cap in force and, when it stopped the run, that it did. */
export interface CapRow {
  readonly name: string;
  readonly limit: string;
  readonly used: string;
  readonly reached: boolean;
}

/** One measured tick. Counts are `null` when they were not measured. */
export interface TickRow {
  /** 1-based position in the whole run; the chart's x value. */
  readonly seq: number;
  /** `run` for the run's own loop, otherwise the slice id. */
  readonly scope: string;
  readonly tick: number;
  readonly passed: number | null;
  readonly failed: number | null;
  readonly weed: string;
  readonly divergences: number;
  readonly uncoveredObligations: number | null;
  readonly blocking: number;
  readonly parked: number;
  readonly structuralErrors: number;
  /** Spend of the run when this tick was recorded (cumulative), when known. */
  readonly usd: number | null;
  readonly converged: boolean;
  /** The progress fingerprint equals the previous tick's in the same scope: a flat tick. */
  readonly stall: boolean;
}

/** One slice of the decomposed goal: a node of the DAG. */
export interface SliceNode {
  readonly id: string;
  readonly status: string;
  readonly dependsOn: readonly string[];
  readonly constructs: readonly string[];
  /** Longest-path layer: slices of one wave do not depend on each other. */
  readonly wave: number;
  readonly ticks: number;
  readonly detail: string | null;
}

/** One phase as the journal recorded it. */
export interface PhaseSpan {
  readonly scope: string;
  readonly tick: number;
  readonly phase: string;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly outcome: string;
  readonly detail: string | null;
}

/** The witness record, when the run has one. */
export interface WitnessSummary {
  readonly verdict: string;
  readonly summary: string;
  readonly checks: readonly {
    readonly name: string;
    readonly result: string;
    readonly groundTruth: string;
  }[];
  readonly violations: readonly { readonly violation: string; readonly routing: string }[];
}

/** An open question raised during the run and what became of it. */
export interface QuestionRow {
  readonly id: string;
  readonly text: string;
  readonly classification: string;
  readonly status: string;
  readonly assumption: string | null;
  readonly answer: string | null;
  readonly raisedAtTick: number;
  readonly phase: string;
}

/** One agent process the engine ran. */
export interface AgentCallRow {
  readonly scope: string;
  readonly tick: number | null;
  readonly phase: string;
  readonly attempt: number;
  readonly startedAt: string | null;
  readonly durationMs: number | null;
  readonly outcome: string;
  readonly usd: number | null;
}

/** A warning tied to a tick: a stall, a cap reached, a guard that caught a cheat. */
export interface WarningRow {
  readonly kind: 'stall' | 'cap' | 'violation' | 'rate_limit';
  readonly scope: string;
  readonly tick: number | null;
  /** The tick's position in {@link ReportModel.ticks}, when the warning belongs to a measured tick. */
  readonly seq: number | null;
  readonly text: string;
}

/** A `--verify` run: the command's exit code and score per tick, kept or reverted when hill-climbing. */
export interface VerifyView {
  readonly command: string;
  readonly climbing: boolean;
  readonly direction: 'max' | 'min' | null;
  readonly baseline: { readonly exitCode: number | null; readonly score: number | null } | null;
  readonly best: { readonly score: number | null; readonly tick: number } | null;
  readonly ticks: readonly {
    readonly tick: number;
    readonly agentOutcome: string;
    readonly exitCode: number | null;
    readonly timedOut: boolean;
    readonly score: number | null;
    readonly kept: boolean | null;
    readonly delta: string;
  }[];
}

/** A `--stories` run: one iteration per tick. */
export interface StoriesView {
  readonly iterations: readonly {
    readonly tick: number;
    readonly story: string;
    readonly title: string;
    readonly verdict: string;
    readonly reason: string | null;
    readonly blocked: boolean;
  }[];
}

/**
 * The pure scheduling core of running slices at once (`--concurrency N`, carried out by `run-wave.ts`): which
 * finished slice merges next, and which slices may start now, given the plan's dependencies, what is in flight and
 * the caps. No effects, no clock: the caller passes the facts and carries the decision out.
 */

/** A slice as the scheduler sees it: its id and the slices that must be merged before it starts. */
export interface SchedSlice {
  readonly id: string;
  readonly dependsOn: readonly string[];
}

/** Where every slice stands. A slice is in at most one set; a slice in none is waiting. */
export interface SchedState {
  /** Running in their own worktree. */
  readonly running: ReadonlySet<string>;
  /** Converged in their worktree, waiting to be merged back. */
  readonly finished: ReadonlySet<string>;
  /** Merged back, with the tests green on the merged tree. */
  readonly merged: ReadonlySet<string>;
  /** Ended without converging (or gave up after a red merge); their dependants never start. */
  readonly failed: ReadonlySet<string>;
}

/** The caps that hold across all slices together. */
export interface SchedCaps {
  /** Slices running at once (`--concurrency N`), at least 1. */
  readonly concurrency: number;
  readonly budgetUsd?: number;
  /** What every slice spent so far, together. */
  readonly spentUsd: number;
  /**
   * The worst case of one agent call (`--max-call-usd`). With a budget, a slice starts only when its first call's
   * worst case fits beside every running slice's call in flight; unknown, a slice starts while spent < budget.
   */
  readonly maxCallUsd?: number;
  readonly wallClockMs?: number;
  readonly elapsedMs: number;
}

/** Why no (further) slice starts now. */
export type HoldReason = 'concurrency' | 'budget' | 'wall_clock' | 'dependencies' | 'none_left';

/** The scheduler's decision: merge this finished slice first (if any), then start these. */
export interface SchedDecision {
  readonly merge?: string;
  readonly start: readonly string[];
  /** Why not more were started (absent when every waiting slice started). */
  readonly held?: HoldReason;
  /** Waiting slices that can never start: a slice they depend on failed. */
  readonly blocked: readonly string[];
}

function dependenciesOf(slices: readonly SchedSlice[]): Map<string, readonly string[]> {
  const ids = new Set(slices.map((s) => s.id));
  // Dependencies on slices outside the plan (already done elsewhere) do not hold anything up.
  return new Map(slices.map((s) => [s.id, s.dependsOn.filter((d) => ids.has(d))]));
}

/** Slices that transitively depend on a failed one. */
function blockedBy(slices: readonly SchedSlice[], failed: ReadonlySet<string>): Set<string> {
  const deps = dependenciesOf(slices);
  const blocked = new Set<string>();
  let grew = true;
  while (grew) {
    grew = false;
    for (const slice of slices) {
      if (blocked.has(slice.id) || failed.has(slice.id)) continue;
      if ((deps.get(slice.id) ?? []).some((d) => failed.has(d) || blocked.has(d))) {
        blocked.add(slice.id);
        grew = true;
      }
    }
  }
  return blocked;
}

/**
 * Decides the next step. Finished slices merge one at a time, once every slice they depend on is merged
 * (topological order: a dependant is never merged before its producer); one that a waiting slice depends on goes
 * first, otherwise plan order, and none that nobody waits for while a slice that others wait for is still running.
 * Waiting slices start in plan order
 * when all their dependencies are merged, while fewer than `concurrency` run, the wall clock has time left and the
 * budget fits one more call in flight. `slices` must be in the plan's (topological) order.
 */
export function schedule(slices: readonly SchedSlice[], state: SchedState, caps: SchedCaps): SchedDecision {
  const deps = dependenciesOf(slices);
  const ready = (id: string) => (deps.get(id) ?? []).every((d) => state.merged.has(d));
  const blocked = blockedBy(slices, state.failed);
  // Of the finished slices that may merge, one that a slice still to start depends on goes first (it is on the
  // critical path: its dependants wait for it); then plan order.
  const mergeable = slices.filter((s) => state.finished.has(s.id) && ready(s.id));
  const awaited = (id: string) =>
    slices.some(
      (s) =>
        !state.running.has(s.id) &&
        !state.finished.has(s.id) &&
        !state.merged.has(s.id) &&
        !state.failed.has(s.id) &&
        (deps.get(s.id) ?? []).includes(id),
    );
  // A merge nobody waits for is held while a slice that others wait for still runs: merges go one at a time, so
  // one begun now could make that slice, when it ends, wait for it, and its dependants with it. The held merges
  // run later, beside the dependants' work.
  const criticalRunning = [...state.running].some((id) => awaited(id));
  const merge = (mergeable.find((s) => awaited(s.id)) ?? (criticalRunning ? undefined : mergeable[0]))?.id;
  const waiting = slices.filter(
    (s) =>
      !state.running.has(s.id) &&
      !state.finished.has(s.id) &&
      !state.merged.has(s.id) &&
      !state.failed.has(s.id) &&
      !blocked.has(s.id),
  );
  const blockedList = slices.filter((s) => blocked.has(s.id)).map((s) => s.id);
  if (waiting.length === 0)
    return { ...(merge === undefined ? {} : { merge }), start: [], blocked: blockedList };
  // Merged in this step counts: a slice waiting only for the one being merged starts after it, next step.
  const startable = waiting.filter((s) => ready(s.id)).map((s) => s.id);
  const start: string[] = [];
  let held: HoldReason | undefined = startable.length === 0 ? 'dependencies' : undefined;
  for (const id of startable) {
    const inFlight = state.running.size + start.length;
    if (caps.wallClockMs !== undefined && caps.elapsedMs >= caps.wallClockMs) {
      held = 'wall_clock';
      break;
    }
    if (inFlight >= Math.max(1, caps.concurrency)) {
      held = 'concurrency';
      break;
    }
    if (caps.budgetUsd !== undefined) {
      const fits =
        caps.maxCallUsd === undefined
          ? caps.spentUsd < caps.budgetUsd
          : caps.spentUsd + (inFlight + 1) * caps.maxCallUsd <= caps.budgetUsd;
      if (!fits) {
        held = 'budget';
        break;
      }
    }
    start.push(id);
  }
  if (held === undefined && start.length < waiting.length) held = 'dependencies';
  return {
    ...(merge === undefined ? {} : { merge }),
    start,
    ...(held === undefined ? {} : { held }),
    blocked: blockedList,
  };
}

/** What a simulated slice does: how long it runs, what it costs, and whether it converges. */
export interface SimSlice extends SchedSlice {
  readonly durationMs: number;
  readonly costUsd?: number;
  readonly converges?: boolean;
}

/** The outcome of {@link simulate}: when each slice ran, merge order, makespan, and the most ever in flight. */
export interface SimResult {
  readonly makespanMs: number;
  readonly runs: readonly { readonly id: string; readonly startMs: number; readonly endMs: number }[];
  readonly mergeOrder: readonly string[];
  readonly failed: readonly string[];
  readonly blocked: readonly string[];
  readonly maxInFlight: number;
  readonly spentUsd: number;
  /** Set when a cap stopped new starts for good (budget or wall clock) with slices still waiting. */
  readonly stoppedBy?: 'budget' | 'wall_clock';
}

/**
 * Runs {@link schedule} against simulated slices of fixed duration, on simulated time: merges take `mergeMs` each
 * (one at a time, as on one tree). Pure; used to check the scheduler and to compute a plan's ideal makespan.
 */
export function simulate(
  slices: readonly SimSlice[],
  caps: Omit<SchedCaps, 'spentUsd' | 'elapsedMs'>,
  mergeMs = 0,
): SimResult {
  const byId = new Map(slices.map((s) => [s.id, s]));
  const running = new Map<string, number>();
  const finished = new Set<string>();
  const merged = new Set<string>();
  const failed = new Set<string>();
  const runs: { id: string; startMs: number; endMs: number }[] = [];
  const mergeOrder: string[] = [];
  let now = 0;
  let spent = 0;
  let maxInFlight = 0;
  let stoppedBy: SimResult['stoppedBy'];
  for (let guard = 0; guard < 10_000; guard += 1) {
    const decision = schedule(
      slices,
      { running: new Set(running.keys()), finished, merged, failed },
      { ...caps, spentUsd: spent, elapsedMs: now },
    );
    // Starts first, then the merge (as the supervisor does): a slice does not wait for a merge it does not need.
    for (const id of decision.start) {
      running.set(id, now + byId.get(id)!.durationMs);
      runs.push({ id, startMs: now, endMs: now + byId.get(id)!.durationMs });
    }
    maxInFlight = Math.max(maxInFlight, running.size);
    if (decision.merge !== undefined) {
      finished.delete(decision.merge);
      merged.add(decision.merge);
      mergeOrder.push(decision.merge);
      now += mergeMs;
      continue;
    }
    if (running.size === 0) {
      if (decision.held === 'budget' || decision.held === 'wall_clock') stoppedBy = decision.held;
      return {
        makespanMs: now,
        runs,
        mergeOrder,
        failed: [...failed],
        blocked: [...decision.blocked],
        maxInFlight,
        spentUsd: spent,
        ...(stoppedBy === undefined ? {} : { stoppedBy }),
      };
    }
    // Advance to the next slice that ends (ties: plan order).
    const next = Math.min(...running.values());
    now = Math.max(now, next);
    for (const slice of slices) {
      if (running.get(slice.id) !== next) continue;
      running.delete(slice.id);
      spent += slice.costUsd ?? 0;
      if (slice.converges === false) failed.add(slice.id);
      else finished.add(slice.id);
    }
  }
  throw new Error('simulate: no progress after 10000 steps');
}

/** The length of the longest dependency chain, by duration: no schedule can finish sooner. */
export function criticalPathMs(slices: readonly SimSlice[]): number {
  const deps = dependenciesOf(slices);
  const finish = new Map<string, number>();
  const visit = (id: string, stack: Set<string>): number => {
    const known = finish.get(id);
    if (known !== undefined) return known;
    if (stack.has(id)) throw new Error(`criticalPathMs: a cycle through ${id}`);
    stack.add(id);
    const slice = slices.find((s) => s.id === id)!;
    const start = Math.max(0, ...(deps.get(id) ?? []).map((d) => visit(d, stack)));
    stack.delete(id);
    finish.set(id, start + slice.durationMs);
    return start + slice.durationMs;
  };
  return Math.max(0, ...slices.map((s) => visit(s.id, new Set())));
}

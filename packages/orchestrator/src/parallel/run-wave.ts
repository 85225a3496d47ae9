import type { JournalEvent, Lease, Ledger, LedgerStore, SubGoal } from '@allium-loop/ledger';
import type { ProjectMeasurement } from '@allium-loop/verify';
import type { SliceFocus } from '../decide/loop-action.js';
import type { LoopCaps, LoopConfig } from '../decide/loop-state.js';
import type { TerminalState } from '../terminal-state.js';
import { readLoopState, specRecord } from '../driver/ledger-sync.js';
import type { LoopPorts, PhaseReport } from '../driver/loop-ports.js';
import { schedule, type SchedSlice } from './schedule.js';
import { SharedLedger } from './shared-ledger.js';
import type { SliceWorkspace, SliceWorkspaces } from './git-worktrees.js';
import { witnessClaim } from '../driver/witness-step.js';

/** How often a slice goes round again after a conflicting or red merge before it counts as failed. */
export const MAX_MERGE_ROUNDS = 2;

/** What the driver gives {@link runSlicesAtOnce} to run slices at once (`--concurrency N`, N > 1). */
export interface ParallelSlices {
  readonly concurrency: number;
  readonly workspaces: SliceWorkspaces;
  /** The loop ports of a slice whose loop works in `cwd` (its worktree), reading its own view of the ledger. */
  portsFor(cwd: string, ledger: () => Ledger): LoopPorts;
}

/** The parts of the driver's options a slice loop is started with (the driver's `RunLoopOptions`). */
export interface SliceLoopOptions {
  readonly store: LedgerStore;
  readonly lease: Lease;
  readonly ledger: Ledger;
  readonly config: LoopConfig;
  readonly ports: LoopPorts;
  readonly slice?: SliceFocus;
  readonly signal: AbortSignal;
  readonly onLedger?: (ledger: Ledger) => void;
}

/** What one wave of slices at once needs from the driver. */
export interface WaveInput<O extends SliceLoopOptions> {
  readonly parallel: ParallelSlices;
  /** The driver's own options: store, lease, clock, signal, ports of the main tree, progress. */
  readonly options: O;
  readonly ledger: Ledger;
  /** The config of a slice loop (the driver's, set to start with propagate and never split again). */
  readonly sliceConfig: LoopConfig;
  /** Run time so far, for the wall-clock cap of starting a slice. */
  readonly elapsedMs: () => number;
  /** The driver's `runLoop`, to run one slice loop. */
  readonly runLoop: (options: O) => Promise<Ledger>;
  readonly now: () => Date;
  readonly progress: (text: string) => void;
  /** Called with the ledger after every write of the wave, so the driver holds the latest even if the wave throws. */
  readonly adopt: (ledger: Ledger) => void;
}

/** How the wave ended: the ledger, and the terminal of the goal when not every slice was merged. */
export interface WaveOutcome {
  readonly ledger: Ledger;
  readonly terminal?: { readonly state: TerminalState; readonly reason: string };
}

type ParallelRecord = NonNullable<ReturnType<typeof specRecord>['parallel']>;

/**
 * Runs the slices of a decomposed goal (the integration pass aside) at once, `concurrency` at a time: each slice's
 * loop in its own worktree on its own branch, started when every slice it depends on is merged; finished slices
 * merged back one at a time in plan order with the tests and the slice's witness re-run on the merged tree; a
 * conflict or a red witness sends the slice round again on the merged base. One writer of the ledger
 * ({@link SharedLedger}); the budget holds across all slices with every call in flight counted; worktrees are
 * removed at the start (a crash's leftovers) and on every end. When the wave itself fails (a git, ledger or witness
 * error outside any slice loop), every slice loop still running is cancelled and waited for before the error leaves:
 * no slice goes on calling agents or writing the ledger after the run has ended and let go of its lease.
 */
export async function runSlicesAtOnce<O extends SliceLoopOptions>(input: WaveInput<O>): Promise<WaveOutcome> {
  const { parallel } = input;
  // The slice loops' own signal: the run's, or the wave's failure.
  const stop = new AbortController();
  const forward = () => stop.abort(input.options.signal.reason);
  if (input.options.signal.aborted) forward();
  else input.options.signal.addEventListener('abort', forward, { once: true });
  const options: O = { ...input.options, signal: stop.signal };
  const shared = new SharedLedger(options.store, options.lease, input.ledger, (ledger) => {
    input.adopt(ledger);
    options.onLedger?.(ledger);
  });
  const note = (message: string, data: Record<string, unknown> = {}): JournalEvent => ({
    type: 'note',
    at: input.now().toISOString(),
    tick: readLoopState(shared.ledger)?.tick ?? 0,
    message,
    data: JSON.parse(JSON.stringify({ parallel: true, ...data })) as Record<string, never>,
  });
  const leftovers = await parallel.workspaces.removeAll();
  if (leftovers.length > 0)
    await shared.update(
      (l) => l,
      [note(`removed ${String(leftovers.length)} worktree(s) left by a stopped run`, { removed: leftovers })],
    );
  const goals = shared.ledger.subGoals.filter((g) => g.id !== 'integration');
  /** Worktree removals of finished slices, under way in the background. */
  const removals = new Map<string, Promise<void>>();
  try {
    await prepare(shared, goals, parallel.workspaces, note);
    return await supervise({ ...input, options }, shared, goals, note, removals, () => stop.abort());
  } finally {
    input.options.signal.removeEventListener('abort', forward);
    await Promise.allSettled(removals.values());
    await parallel.workspaces.removeAll();
  }
}

/** The wave's record: made at its first start; on a later start, the main tree is put back to the merged base. */
async function prepare(
  shared: SharedLedger,
  goals: readonly SubGoal[],
  workspaces: SliceWorkspaces,
  note: (message: string, data?: Record<string, unknown>) => JournalEvent,
): Promise<void> {
  const existing = specRecord(shared.ledger).parallel;
  const merged = new Set(
    existing?.mergedSlices ?? goals.filter((g) => g.status === 'converged').map((g) => g.id),
  );
  let record: ParallelRecord;
  const events: JournalEvent[] = [];
  if (existing === undefined) {
    record = { merged: await workspaces.snapshot(), mergedSlices: [...merged], commits: {}, rounds: {} };
    events.push(
      note(`slices run at once from merged base ${record.merged.slice(0, 12)}`, { base: record.merged }),
    );
  } else {
    record = existing;
    if (goals.some((g) => !merged.has(g.id)) && (await workspaces.showInMain(record.merged)))
      events.push(note(`main tree restored to the merged base ${record.merged.slice(0, 12)}`));
  }
  await workspaces.setMerged(record.merged);
  // A slice neither merged nor finished (its commit recorded) was running when the run stopped: its worktree is
  // gone, so it starts again from the merged base, its unfinished calls abandoned.
  const restart = goals.filter((g) => !merged.has(g.id) && record.commits[g.id] === undefined);
  await shared.update(
    (ledger) =>
      restartSlices(
        withParallel(ledger, record),
        restart.map((g) => g.id),
        'the slice starts again in a new worktree',
        new Date(ledger.updatedAt),
      ),
    events,
  );
}

/** The slice's generated tests join the run's protected tests (its merge is being verified). Pure. */
function promoteTests(
  ledger: Ledger,
  id: string,
  tests: readonly Ledger['protectedTests'][number][],
): Ledger {
  const paths = new Set(tests.map((t) => t.path));
  const p = specRecord(ledger).parallel!;
  const { [id]: _moved, ...pendingTests } = p.pendingTests ?? {};
  return withParallel(
    { ...ledger, protectedTests: [...ledger.protectedTests.filter((t) => !paths.has(t.path)), ...tests] },
    { ...p, pendingTests },
  );
}

function withParallel(ledger: Ledger, parallel: ParallelRecord): Ledger {
  return { ...ledger, modeState: { ...specRecord(ledger), parallel } };
}

/** Drops the loop state of `ids` (they start afresh): pending, no report, unfinished calls abandoned. Pure. */
export function restartSlices(ledger: Ledger, ids: readonly string[], detail: string, at: Date): Ledger {
  if (ids.length === 0) return ledger;
  const record = specRecord(ledger);
  const without = <T>(entries: Record<string, T> | undefined) =>
    Object.fromEntries(Object.entries(entries ?? {}).filter(([id]) => !ids.includes(id)));
  const slices = without(record.slices);
  const lastCalls = without(record.lastCalls);
  const prefixes = ids.map((id) => `slice:${id}/`);
  return {
    ...ledger,
    intents: ledger.intents.map((intent) =>
      intent.outcome === null && prefixes.some((p) => intent.key.startsWith(p))
        ? { ...intent, outcome: { status: 'abandoned' as const, at: at.toISOString(), detail } }
        : intent,
    ),
    subGoals: ledger.subGoals.map((g) =>
      ids.includes(g.id) ? { ...g, status: 'pending' as const, report: null } : g,
    ),
    modeState: {
      ...record,
      slices,
      lastCalls,
      ...(record.parallel === undefined
        ? {}
        : {
            parallel: {
              ...record.parallel,
              pendingTests: without(record.parallel.pendingTests),
            },
          }),
    },
  };
}

/** Calls in flight across slices, and the budget each slice's pre-flight sees. */
class SpendGate {
  private readonly inFlight = new Map<string, number>();
  private waiters: (() => void)[] = [];

  constructor(
    private readonly caps: LoopCaps,
    private readonly spentAll: () => number,
  ) {}

  /** The worst case of one call: `--max-call-usd`, else the reservation from the model's price table. */
  private get worst(): number | undefined {
    return this.caps.maxCallUsd ?? this.caps.reserveUsd;
  }

  private othersInFlight(id: string): number {
    let count = 0;
    for (const [slice, n] of this.inFlight) if (slice !== id) count += n;
    return count;
  }

  /**
   * The budget a slice's own pre-flight compares its own spend with: the run's budget less what every other
   * slice (and the run before them) spent and the worst case of every other call in flight.
   */
  budgetFor(id: string, ownSpent: number): number | undefined {
    const budget = this.caps.budgetUsd;
    if (budget === undefined) return undefined;
    const others = this.spentAll() - ownSpent + this.othersInFlight(id) * (this.worst ?? 0);
    return Math.max(0, budget - others);
  }

  private fits(id: string): boolean {
    const budget = this.caps.budgetUsd;
    if (budget === undefined) return true;
    const worst = this.worst;
    const spent = this.spentAll();
    if (worst === undefined) return spent < budget;
    return spent + (this.othersInFlight(id) + 1) * worst <= budget + 1e-9;
  }

  /** Waits until the call's worst case fits beside every call in flight; false when it never will. */
  async acquire(id: string): Promise<boolean> {
    while (!this.fits(id)) {
      if (this.othersInFlight(id) === 0) return false;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
    this.inFlight.set(id, (this.inFlight.get(id) ?? 0) + 1);
    return true;
  }

  release(id: string): void {
    const n = (this.inFlight.get(id) ?? 1) - 1;
    if (n <= 0) this.inFlight.delete(id);
    else this.inFlight.set(id, n);
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

/** The report of a call the budget refused before it started: nothing spent; the slice's pre-flight then stops it. */
function refused(phase: PhaseReport['observation']['phase']): PhaseReport {
  return {
    observation: {
      kind: 'phase_done',
      phase,
      ok: false,
      costUsd: 0,
      detail: 'budget: the worst case of this call does not fit beside the calls of the other slices',
    },
    events: [],
    questions: [],
    costKnown: true,
    durationMs: 0,
  };
}

/** What woke the supervisor: a slice loop ended, a finished slice was committed, or the merge in flight ended. */
type Wake =
  | { readonly kind: 'ended'; readonly id: string }
  | { readonly kind: 'committed'; readonly id: string }
  | { readonly kind: 'merged' };

async function supervise<O extends SliceLoopOptions>(
  input: WaveInput<O>,
  shared: SharedLedger,
  goals: readonly SubGoal[],
  note: (message: string, data?: Record<string, unknown>) => JournalEvent,
  removals: Map<string, Promise<void>>,
  cancelSlices: () => void,
): Promise<WaveOutcome> {
  const { parallel, options } = input;
  const caps = input.sliceConfig.caps;
  const gate = new SpendGate(caps, () => shared.ledger.spent.usd ?? 0);
  const worst = caps.maxCallUsd ?? caps.reserveUsd;
  const slices: SchedSlice[] = goals.map((g) => ({ id: g.id, dependsOn: g.dependsOn }));
  /** Slices whose loop runs, or that ended and are being committed: neither waiting nor finished. */
  const running = new Map<string, SliceWorkspace>();
  /** What the supervisor waits on: slice loops (`run:<id>`), commits (`commit:<id>`), the one merge (`merge`). */
  const tasks = new Map<string, Promise<Wake>>();
  /** Each slice's last witness measurement in its worktree, reused when its merge leaves that very tree. */
  const measuredIn = new Map<string, ProjectMeasurement>();
  const failed = new Map<string, { state: TerminalState; reason: string }>();
  const record = () => specRecord(shared.ledger).parallel!;
  let held: string | undefined;
  // The timings the wave's journal notes carry (read by tools/bench/parallel), on the run's clock.
  const clock = () => input.now().getTime();
  const since = (from: number) => clock() - from;

  const launch = async (goal: SubGoal): Promise<void> => {
    // A slice sent round again gets a new worktree where its old one was: the old one's removal ends first.
    await removals.get(goal.id);
    const began = clock();
    const workspace = await parallel.workspaces.create(goal.id, record().merged);
    const worktreeMs = since(began);
    const start = shared.ledger;
    let view = start;
    const store = shared.sliceStore(goal.id, start);
    // The run's trace is the supervisor's to write, from the shared ledger; a slice's view would be partial.
    const { writeTrace: _trace, ...base } = parallel.portsFor(workspace.cwd, () => view);
    const ports: LoopPorts = {
      ...base,
      runPhase: async (request) => {
        if (!(await gate.acquire(goal.id))) return refused(request.phase);
        try {
          return await base.runPhase(request);
        } finally {
          gate.release(goal.id);
        }
      },
      witness: async (request) => {
        const report = await base.witness(request);
        if (report.measured === undefined) measuredIn.delete(goal.id);
        else measuredIn.set(goal.id, report.measured);
        return report;
      },
    };
    const ownSpent = () => readLoopState(view, goal.id)?.spentUsd ?? 0;
    const liveCaps: LoopCaps =
      caps.budgetUsd === undefined
        ? caps
        : Object.defineProperty({ ...caps }, 'budgetUsd', {
            enumerable: true,
            get: () => gate.budgetFor(goal.id, ownSpent()),
          });
    const slice: SliceFocus = { id: goal.id, constructs: goal.slice.constructs, integration: false };
    running.set(goal.id, workspace);
    measuredIn.delete(goal.id);
    await shared.update(
      (l) => l,
      [
        note(`slice ${goal.id} started in worktree ${workspace.dir} (branch ${workspace.branch})`, {
          event: 'slice_started',
          slice: goal.id,
          base: record().merged,
          worktreeMs,
        }),
      ],
    );
    input.progress(`[${goal.id}] started in its own worktree`);
    tasks.set(
      `run:${goal.id}`,
      input
        .runLoop({
          ...options,
          store,
          ledger: start,
          config: { ...input.sliceConfig, caps: liveCaps },
          slice,
          ports,
          onLedger: (next: Ledger) => {
            view = next;
          },
        })
        .then(() => ({ kind: 'ended', id: goal.id })),
    );
  };

  /** A slice loop ended: commit its worktree (converged) or record it failed; its worktree goes in the background. */
  const commit = async (id: string): Promise<void> => {
    const workspace = running.get(id)!;
    const state = readLoopState(shared.ledger, id);
    const terminal = state?.terminal;
    try {
      if (terminal?.state === 'converged') {
        const began = clock();
        const made = await parallel.workspaces.commit(workspace);
        const commitMs = since(began);
        await shared.update(
          (l) =>
            withParallel(l, {
              ...specRecord(l).parallel!,
              commits: { ...specRecord(l).parallel!.commits, [id]: made },
            }),
          [
            note(`slice ${id} finished in its worktree as ${made.slice(0, 12)}`, {
              event: 'slice_finished',
              slice: id,
              commit: made,
              commitMs,
            }),
          ],
        );
      } else {
        failed.set(id, {
          state: terminal?.state ?? 'failed',
          reason: terminal?.reason ?? 'ended without a verdict',
        });
        await shared.update(
          (l) => l,
          [note(`slice ${id} ended ${terminal?.state ?? 'failed'}`, { event: 'slice_ended', slice: id })],
        );
      }
    } finally {
      // Nothing waits for the removal but a new worktree of the same slice and the wave's end.
      removals.set(id, removeWorktree(parallel.workspaces, workspace, shared, note, clock));
    }
  };

  const merge = async (id: string): Promise<void> => {
    const current = record();
    const commit = current.commits[id]!;
    const began = clock();
    const outcome = await parallel.workspaces.merge(current.merged, commit, id);
    let why: string | undefined;
    if (!outcome.ok) why = `merge conflict in ${outcome.conflicts.join(', ') || 'the tree'}`;
    else {
      // The main tree holds the merged base: the supervisor put it there and nothing else moves it.
      await parallel.workspaces.showInMain(outcome.commit, current.merged);
      const mergeMs = since(began);
      const tests = current.pendingTests?.[id] ?? [];
      await shared.update((l) => promoteTests(l, id, tests));
      const state = readLoopState(shared.ledger, id);
      const { recorded: _recorded, ...claim } = witnessClaim(state!, input.sliceConfig);
      // The slice's coverage counts only its own constructs' obligations, as its witness in the worktree did.
      const constructs = shared.ledger.subGoals.find((goal) => goal.id === id)?.slice.constructs;
      // Merged onto an unmoved base, the tree is the one the slice's own witness just ran the tests on: that run
      // stands; the witness's other checks run against the run's ledger as always.
      const measured = outcome.unchanged ? measuredIn.get(id) : undefined;
      const witnessBegan = clock();
      const witness = await options.ports.witness({
        slice: id,
        ...(constructs === undefined ? {} : { constructs }),
        claim,
        signal: options.signal,
        ...(measured === undefined ? {} : { measured }),
      });
      const witnessMs = since(witnessBegan);
      if (witness.result.verdict === 'PASS') {
        await parallel.workspaces.setMerged(outcome.commit);
        const c = outcome.commit;
        await shared.update(
          (l) => {
            const p = specRecord(l).parallel!;
            const { [id]: _done, ...commits } = p.commits;
            return withParallel(l, { ...p, merged: c, mergedSlices: [...p.mergedSlices, id], commits });
          },
          [
            note(
              `merged slice ${id} (${c.slice(0, 12)}); ${witness.result.summary}${measured === undefined ? '' : ' (the tree its own witness tested: tests not run again)'}`,
              {
                event: 'slice_merged',
                slice: id,
                commit: c,
                mergeMs,
                witnessMs,
                totalMs: since(began),
                testsRun: measured === undefined,
              },
            ),
          ],
        );
        input.progress(`[${id}] merged; tests green on the merged tree`);
        return;
      }
      why = `red after merge: ${witness.result.summary}`;
      await parallel.workspaces.showInMain(current.merged, outcome.commit);
      const paths = new Set(tests.map((t) => t.path));
      await shared.update((l) => ({
        ...l,
        protectedTests: l.protectedTests.filter((t) => !paths.has(t.path)),
      }));
    }
    const rounds = (current.rounds[id] ?? 0) + 1;
    const again = rounds <= MAX_MERGE_ROUNDS;
    await shared.update(
      (l) => {
        const p = specRecord(l).parallel!;
        const { [id]: _dropped, ...commits } = p.commits;
        const next = withParallel(l, { ...p, commits, rounds: { ...p.rounds, [id]: rounds } });
        return again ? restartSlices(next, [id], why!, input.now()) : next;
      },
      [
        note(
          again
            ? `slice ${id} goes round again on the merged base (${why!})`
            : `slice ${id} failed: ${why!}, ${String(rounds)} time(s)`,
          { event: again ? 'slice_round_again' : 'slice_merge_failed', slice: id, round: rounds },
        ),
      ],
    );
    if (!again)
      failed.set(id, { state: 'failed', reason: `${why!} after ${String(MAX_MERGE_ROUNDS)} more round(s)` });
  };

  // Event-driven: every time a slice loop ends, a commit is made or the merge ends, the scheduler decides again at
  // once. Slices start before the next merge begins (a dependant starts the moment its last dependency is merged);
  // commits run beside the merge in flight, so a finished slice is mergeable as soon as it can be; one merge at a
  // time (they build on each other on the main tree). When anything of it throws (a git, ledger or witness error:
  // a slice loop's own port failures end that slice, never the wave), the slice loops still running are stopped and
  // the error leaves only when nothing of the wave runs any more, so their last writes land under the run's lease.
  try {
    for (;;) {
      const current = record();
      const merging = tasks.has('merge');
      const decision = schedule(
        slices,
        {
          running: new Set(running.keys()),
          finished: new Set(Object.keys(current.commits)),
          merged: new Set(current.mergedSlices),
          failed: new Set(failed.keys()),
        },
        {
          concurrency: parallel.concurrency,
          ...(caps.budgetUsd === undefined ? {} : { budgetUsd: caps.budgetUsd }),
          ...(worst === undefined ? {} : { maxCallUsd: worst }),
          ...(caps.wallClockMs === undefined ? {} : { wallClockMs: caps.wallClockMs }),
          spentUsd: shared.ledger.spent.usd ?? 0,
          elapsedMs: input.elapsedMs(),
        },
      );
      if (!options.signal.aborted) {
        // Every launch ends before a failed one is thrown: a slice loop started beside it is then in `tasks`.
        const launches = await Promise.allSettled(
          decision.start.map((id) => launch(goals.find((g) => g.id === id)!)),
        );
        const failedLaunch = launches.find((l) => l.status === 'rejected');
        if (failedLaunch !== undefined) throw failedLaunch.reason;
        if (decision.merge !== undefined && !merging) {
          const id = decision.merge;
          tasks.set(
            'merge',
            merge(id).then(() => ({ kind: 'merged' })),
          );
        }
      }
      held = decision.held;
      if (tasks.size === 0) break;
      const wake = await Promise.race(tasks.values());
      if (wake.kind === 'merged') tasks.delete('merge');
      else if (wake.kind === 'ended') {
        tasks.delete(`run:${wake.id}`);
        tasks.set(
          `commit:${wake.id}`,
          commit(wake.id).then(() => ({ kind: 'committed', id: wake.id })),
        );
      } else {
        tasks.delete(`commit:${wake.id}`);
        running.delete(wake.id);
      }
    }
  } catch (error) {
    cancelSlices();
    await Promise.allSettled(tasks.values());
    throw error;
  }

  const ledger = shared.ledger;
  const mergedAll = goals.every((g) => record().mergedSlices.includes(g.id));
  if (mergedAll) return { ledger };
  const first = goals.map((g) => failed.get(g.id)).find((f) => f !== undefined);
  if (first !== undefined) {
    const id = goals.find((g) => failed.get(g.id) === first)!.id;
    return { ledger, terminal: { state: first.state, reason: `slice ${id}: ${first.reason}` } };
  }
  if (options.signal.aborted) return { ledger, terminal: { state: 'cancelled', reason: 'cancelled' } };
  if (held === 'budget')
    return { ledger, terminal: { state: 'budget_exhausted', reason: 'budget: no slice could start' } };
  if (held === 'wall_clock')
    return { ledger, terminal: { state: 'timed_out', reason: 'wall-clock cap reached' } };
  return { ledger, terminal: { state: 'failed', reason: 'slices left unmerged' } };
}

/** Removes a finished slice's worktree and branch, and journals how long that took. */
async function removeWorktree(
  workspaces: SliceWorkspaces,
  workspace: SliceWorkspace,
  shared: SharedLedger,
  note: (message: string, data?: Record<string, unknown>) => JournalEvent,
  clock: () => number,
): Promise<void> {
  const began = clock();
  await workspaces.remove(workspace);
  await shared.update(
    (l) => l,
    [
      note(`worktree of slice ${workspace.sliceId} removed`, {
        event: 'slice_worktree_removed',
        slice: workspace.sliceId,
        removeMs: clock() - began,
      }),
    ],
  );
}

import type { JournalEvent, Lease, Ledger, LedgerStore } from '@allium-loop/ledger';
import { specRecord } from '../driver/ledger-sync.js';

/**
 * Folds what one slice loop wrote into the run's ledger, taking only that slice's section from its view: its loop
 * state and last call, its sub-goal, its intents (`slice:<id>/…`), and what changed since its previous write
 * (`base`) in the shared parts — checkpoints, questions and protected tests by key, spend as a difference. Every
 * other slice's section and the supervisor's own fields stay as `shared` has them, so slice loops writing at once
 * never overwrite each other. Pure.
 */
export function mergeSliceView(shared: Ledger, base: Ledger, view: Ledger, sliceId: string): Ledger {
  const prefix = `slice:${sliceId}/`;
  const viewRecord = specRecord(view);
  const record = specRecord(shared);
  const ownIntents = new Map(view.intents.filter((i) => i.key.startsWith(prefix)).map((i) => [i.key, i]));
  const intents = [
    ...shared.intents.map((i) => ownIntents.get(i.key) ?? i),
    ...[...ownIntents.values()].filter((i) => !shared.intents.some((s) => s.key === i.key)),
  ];
  const state = viewRecord.slices?.[sliceId];
  const lastCall = viewRecord.lastCalls?.[sliceId];
  const goal = view.subGoals.find((g) => g.id === sliceId);
  // While slices run at once, a slice's generated tests exist only in its worktree: they wait in the wave's
  // record and join the run's protected tests when the slice is merged.
  const parallel = record.parallel;
  const ownTests = (into: readonly Ledger['protectedTests'][number][]) =>
    upsertChanged(into, base.protectedTests, view.protectedTests, (t) => t.path, true);
  return {
    ...shared,
    updatedAt: view.updatedAt,
    intents,
    checkpoints: upsertChanged(shared.checkpoints, base.checkpoints, view.checkpoints, (c) => c.ref),
    questions: upsertChanged(shared.questions, base.questions, view.questions, (q) => q.id),
    protectedTests: parallel === undefined ? ownTests(shared.protectedTests) : shared.protectedTests,
    spent: addSpentDelta(shared.spent, base.spent, view.spent),
    subGoals:
      goal === undefined ? shared.subGoals : shared.subGoals.map((g) => (g.id === sliceId ? goal : g)),
    modeState: {
      ...record,
      ...(state === undefined ? {} : { slices: { ...record.slices, [sliceId]: state } }),
      ...(lastCall === undefined ? {} : { lastCalls: { ...record.lastCalls, [sliceId]: lastCall } }),
      ...(parallel === undefined
        ? {}
        : {
            parallel: {
              ...parallel,
              pendingTests: {
                ...parallel.pendingTests,
                [sliceId]: ownTests(parallel.pendingTests?.[sliceId] ?? []),
              },
            },
          }),
    },
  };
}

/** `shared` with the entries of `view` that are new or changed since `base` (by key); `removals` drops removed ones. */
function upsertChanged<T>(
  shared: readonly T[],
  base: readonly T[],
  view: readonly T[],
  key: (item: T) => string,
  removals = false,
): T[] {
  const before = new Map(base.map((item) => [key(item), JSON.stringify(item)]));
  const changed = view.filter((item) => before.get(key(item)) !== JSON.stringify(item));
  const byKey = new Map(changed.map((item) => [key(item), item]));
  const removed = removals
    ? new Set([...before.keys()].filter((k) => !view.some((item) => key(item) === k)))
    : new Set<string>();
  const kept = shared.filter((item) => !removed.has(key(item))).map((item) => byKey.get(key(item)) ?? item);
  const known = new Set(shared.map(key));
  return [...kept, ...changed.filter((item) => !known.has(key(item)))];
}

type Spent = Ledger['spent'];

/** `shared` plus what `view` spent since `base`: calls, cost (unknown costs counted apart) and tokens. */
function addSpentDelta(shared: Spent, base: Spent, view: Spent): Spent {
  const usdDelta = (view.usd ?? 0) - (base.usd ?? 0);
  const usd = shared.usd === null && view.usd === base.usd ? null : (shared.usd ?? 0) + usdDelta;
  return {
    ...shared,
    agentCalls: shared.agentCalls + view.agentCalls - base.agentCalls,
    usd,
    usdUnknownCalls: shared.usdUnknownCalls + view.usdUnknownCalls - base.usdUnknownCalls,
    tokens: {
      input: shared.tokens.input + view.tokens.input - base.tokens.input,
      output: shared.tokens.output + view.tokens.output - base.tokens.output,
      cacheRead: shared.tokens.cacheRead + view.tokens.cacheRead - base.tokens.cacheRead,
      cacheWrite: shared.tokens.cacheWrite + view.tokens.cacheWrite - base.tokens.cacheWrite,
    },
  };
}

/**
 * The one writer of a run's ledger while slice loops run at once: every write — a slice loop's, through the store
 * {@link SharedLedger.sliceStore} gives it, or the supervisor's own {@link SharedLedger.update} — is queued and
 * applied to the ledger as it stands then, one at a time. A slice loop contributes only its own section
 * ({@link mergeSliceView}); nobody saves a whole-ledger snapshot over another's.
 */
export class SharedLedger {
  private current: Ledger;
  private queue: Promise<unknown> = Promise.resolve();
  /** Each slice loop's ledger as it last wrote it: the base its next write is compared with. */
  private readonly views = new Map<string, Ledger>();

  constructor(
    private readonly store: LedgerStore,
    private readonly lease: Lease,
    ledger: Ledger,
    private readonly onLedger?: (ledger: Ledger) => void,
  ) {
    this.current = ledger;
  }

  /** The ledger as last written. */
  get ledger(): Ledger {
    return this.current;
  }

  /** Applies `change` to the ledger as it stands when its turn comes, appends `events`, then saves. */
  update(change: (ledger: Ledger) => Ledger, events: readonly JournalEvent[] = []): Promise<Ledger> {
    return this.serial(async () => {
      const next = change(this.current);
      if (events.length > 0) await this.store.append(this.lease, events);
      await this.write(next);
      return next;
    });
  }

  /**
   * The store a slice loop writes through: its saves are folded into the shared ledger as its section, its journal
   * events appended in turn; reads go to the real store. `start` is the ledger the slice loop starts from.
   */
  sliceStore(sliceId: string, start: Ledger): LedgerStore {
    this.views.set(sliceId, start);
    const store = this.store;
    return {
      load: (slug) => store.load(slug),
      list: () => store.list(),
      acquire: (slug) => store.acquire(slug),
      heartbeat: (lease) => store.heartbeat(lease),
      release: (lease) => store.release(lease),
      readLease: (slug) => store.readLease(slug),
      readJournal: (slug) => store.readJournal(slug),
      append: (lease, events, options) => this.serial(() => store.append(lease, events, options)),
      save: (_lease, view) =>
        this.serial(async () => {
          const base = this.views.get(sliceId) ?? start;
          const outcome = await this.write(mergeSliceView(this.current, base, view, sliceId));
          this.views.set(sliceId, view);
          return outcome;
        }),
    };
  }

  private async write(ledger: Ledger) {
    const outcome = await this.store.save(this.lease, ledger);
    this.current = ledger;
    this.onLedger?.(ledger);
    return outcome;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

import {
  judgeStaleness,
  systemLeaseEnvironment,
  type LeaseRecord,
  type Ledger,
  type LedgerStore,
} from '@allium-loop/ledger';
import { readLoopState } from '../driver/ledger-sync.js';
import type { TerminalState } from '../terminal-state.js';

/**
 * Where a run stands, as the user should be told: `running` only while a live supervisor holds its lease;
 * `interrupted` when the ledger says running but nobody drives it (killed, crashed, or stopped before its first
 * decision); otherwise its terminal state.
 */
export type RunCondition = 'running' | 'interrupted' | TerminalState;

/** One run as `list` and `status` show it. */
export interface RunOverview {
  readonly slug: string;
  readonly ledger: Ledger;
  readonly condition: RunCondition;
  /** Finished ticks of the run and of every slice loop. */
  readonly ticks: number;
  /** The live supervisor driving it, when `running`. */
  readonly holder?: Pick<LeaseRecord, 'pid' | 'host' | 'startedAt'>;
}

/** A recorded run whose ledger cannot be read. */
export interface UnreadableRun {
  readonly slug: string;
  readonly problem: string;
}

/** Finished ticks of a run: its own verdicts plus every slice loop's (a decomposed run ticks inside slices). */
export function runTicks(ledger: Ledger): number {
  return (
    ledger.verdicts.length +
    ledger.subGoals.reduce((sum, goal) => sum + (readLoopState(ledger, goal.id)?.verdicts.length ?? 0), 0)
  );
}

/** The live holder of a run's lease, or `undefined` when nobody (alive) holds it. */
export async function liveHolder(store: LedgerStore, slug: string): Promise<LeaseRecord | undefined> {
  const record = await store.readLease(slug).catch(() => undefined);
  if (record === undefined) return undefined;
  return judgeStaleness(record, systemLeaseEnvironment()) === undefined ? record : undefined;
}

/** Describes one loaded run: its condition (checked against the lease), its real tick count and its driver. */
export async function describeRun(store: LedgerStore, ledger: Ledger): Promise<RunOverview> {
  const ticks = runTicks(ledger);
  if (ledger.terminal !== null) return { slug: ledger.slug, ledger, condition: ledger.terminal.state, ticks };
  const holder = await liveHolder(store, ledger.slug);
  return holder === undefined
    ? { slug: ledger.slug, ledger, condition: 'interrupted', ticks }
    : {
        slug: ledger.slug,
        ledger,
        condition: 'running',
        ticks,
        holder: { pid: holder.pid, host: holder.host, startedAt: holder.startedAt },
      };
}

/** Every run recorded in the store, described; unreadable ledgers are listed with the reason. */
export async function listRuns(store: LedgerStore): Promise<(RunOverview | UnreadableRun)[]> {
  const rows: (RunOverview | UnreadableRun)[] = [];
  for (const slug of await store.list()) {
    const loaded = await store.load(slug);
    rows.push(
      loaded.ok
        ? await describeRun(store, loaded.value.ledger)
        : {
            slug,
            problem: loaded.issues.kind === 'corrupt' ? `corrupt (${loaded.issues.reason})` : 'missing',
          },
    );
  }
  return rows;
}

/** Runs other than `slug` that a live supervisor is driving in the same project right now. */
export async function otherLiveRuns(store: LedgerStore, slug: string): Promise<RunOverview[]> {
  const live: RunOverview[] = [];
  for (const other of await store.list()) {
    if (other === slug) continue;
    const holder = await liveHolder(store, other);
    if (holder === undefined) continue;
    const loaded = await store.load(other);
    if (loaded.ok) live.push(await describeRun(store, loaded.value.ledger));
  }
  return live.filter((run) => run.condition === 'running');
}

/**
 * The loop a recorded run belongs to — `spec` or the loop mode it was started with — read from its ledger, or
 * `undefined` when no readable run has that slug (resume then reports why). The CLI asks this instead of reading
 * ledgers itself.
 */
export async function recordedLoop(store: LedgerStore, slug: string): Promise<Ledger['mode'] | undefined> {
  const loaded = await store.load(slug);
  return loaded.ok ? loaded.value.ledger.mode : undefined;
}

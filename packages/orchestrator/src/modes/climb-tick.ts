import type { JournalEvent, Ledger } from '@allium-loop/ledger';
import type { GitSnapshots } from '../project/git.js';
import type { ModeSession } from './mode-session.js';
import { touchedPaths } from './touched-paths.js';

/**
 * A verify tick under way, kept in the ledger from just before the agent's call until the tick's record is saved:
 * the tree the tick started from (`before`, a commit under `refs/allium-loop/<slug>/pending`) and, climbing, the
 * best commit it is judged against. A tick a crash or a stop left open is rolled back from it, plain or climbing.
 */
export interface OpenTick {
  readonly tick: number;
  readonly before: string;
  /** Hill-climb only: the best commit the tick is judged against (and `…/best` is put back to on a rollback). */
  readonly best?: string;
}

/** What the agent changed in a tick: the paths it touched and a snapshot (`after`) holding their new content. */
export interface TickEdits {
  readonly after: string;
  readonly paths: readonly string[];
}

/** The refs of a run: `refs/allium-loop/<slug>/…`. */
export function climbRefs(slug: string) {
  const prefix = `refs/allium-loop/${slug}/`;
  return {
    prefix,
    best: `${prefix}best`,
    pending: `${prefix}pending`,
    tick: (tick: number) => `${prefix}tick-${String(tick)}`,
    reverted: (tick: number) => `${prefix}reverted-${String(tick)}`,
    /** Where a HEAD the run reset away from stays reachable. */
    moved: (commit: string) => `${prefix}moved-${commit.slice(0, 12)}`,
  };
}

/**
 * Snapshots the tree before the agent's call (under `…/pending`) and opens the tick. Outside a git work tree a
 * plain tick (no `best`) has nothing to roll back to: `undefined`; a climb tick cannot be judged there: throws.
 */
export async function openTick(
  git: GitSnapshots,
  slug: string,
  tick: number,
  best?: string,
): Promise<OpenTick | undefined> {
  const made = await git.snapshot(`allium-loop ${slug} before tick ${String(tick)}`);
  if (made === undefined && best === undefined) return undefined;
  if (made === undefined) throw new Error(`cannot open tick ${String(tick)}: not in a git work tree`);
  await git.pointRef(climbRefs(slug).pending, made.object);
  return { tick, before: made.object, ...(best === undefined ? {} : { best }) };
}

/** Snapshots the tree now and names the paths changed since the tick opened (the engine's own log left out). */
export async function tickEdits(git: GitSnapshots, slug: string, open: OpenTick): Promise<TickEdits> {
  const after = await git.snapshot(`allium-loop ${slug} tick ${String(open.tick)}, reverted`);
  if (after === undefined)
    throw new Error(`cannot snapshot tick ${String(open.tick)}: not in a git work tree`);
  return { after: after.object, paths: await touchedPaths(git, open.before, after.object) };
}

/**
 * Undoes a tick's own edits: only the paths it touched get the content they had when the tick opened (created
 * files are deleted, deleted ones come back); nothing else in the tree is written. What was undone stays
 * reachable under `refs/allium-loop/<slug>/reverted-<tick>`: the tree as it was just before the revert (`edits`
 * when `fresh` or when those paths still hold what it recorded, else a new snapshot), so an edit someone made to
 * one of those paths after the agent's call is kept there too.
 */
export async function revertTick(
  git: GitSnapshots,
  slug: string,
  open: OpenTick,
  edits: TickEdits,
  fresh = false,
): Promise<void> {
  if (edits.paths.length === 0) return;
  const kept =
    fresh || (await git.pathsMatch(edits.after, edits.paths))
      ? edits.after
      : (await git.snapshot(`allium-loop ${slug} tick ${String(open.tick)}, reverted`))?.object;
  await git.restorePaths(open.before, edits.paths);
  if (kept !== undefined) await git.pointRef(climbRefs(slug).reverted(open.tick), kept);
}

/** Drops the `…/pending` ref once the tick's record is saved. */
export async function closeTick(git: GitSnapshots, slug: string): Promise<void> {
  await git.deleteRef(climbRefs(slug).pending);
}

/**
 * On resume (or when a run stops inside a tick): rolls the open tick back so its unscored edits never reach a
 * checkpoint. The paths changed since the tick opened go back to that tree, `best` is put back to the best the
 * ledger recorded, a checkpoint the tick had begun to keep is dropped (its ref and its ledger entry), and the
 * journal gets `x-verify.rolled_back` naming the paths. Returns the ledger's checkpoints without that tick's.
 */
export async function rollBackOpenTick(
  session: ModeSession,
  git: GitSnapshots,
  open: OpenTick,
  why: string,
): Promise<TickEdits> {
  const slug = session.ledger.slug;
  const refs = climbRefs(slug);
  const edits = await tickEdits(git, slug, open);
  await revertTick(git, slug, open, edits, true);
  if (open.best !== undefined) await git.pointRef(refs.best, open.best);
  const own = session.ledger.checkpoints.filter((c) => c.tick >= open.tick).map((c) => c.ref);
  for (const ref of new Set([refs.tick(open.tick), ...own])) await git.deleteRef(ref);
  await closeTick(git, slug);
  const checkpoints = session.ledger.checkpoints.filter((c) => c.tick < open.tick);
  await session.persist({ ...session.ledger, checkpoints }, [
    session.event('rolled_back', {
      tick: open.tick,
      why,
      to: open.before,
      paths: edits.paths,
      ...(edits.paths.length > 0 ? { kept: refs.reverted(open.tick) } : {}),
    }),
  ]);
  const judged = open.best === undefined ? 'measured' : 'scored';
  session.say(
    edits.paths.length === 0
      ? `tick ${String(open.tick)} was ${why} before it was ${judged}; it had changed nothing`
      : `tick ${String(open.tick)} was ${why} before it was ${judged}: rolled back ${String(edits.paths.length)} file(s) (${edits.paths.slice(0, 5).join(', ')}${edits.paths.length > 5 ? ', …' : ''}); its edits are kept under ${refs.reverted(open.tick)}`,
  );
  return edits;
}

/** A ref of the run that does not name the commit the ledger recorded for it. */
export interface RefMove {
  readonly ref: string;
  readonly expected: string;
  /** What the ref named (`null`: deleted). */
  readonly found: string | null;
}

/**
 * The refs the ledger vouches for: each checkpoint it recorded (`…/tick-<n>`), `…/best` at the recorded best
 * commit, and `…/pending` at the open tick's start.
 */
export function expectedRefs(
  ledger: Pick<Ledger, 'slug' | 'checkpoints'>,
  best: string | null,
  open: OpenTick | null | undefined,
): Map<string, string> {
  const refs = climbRefs(ledger.slug);
  const expected = new Map<string, string>();
  for (const checkpoint of ledger.checkpoints)
    if (checkpoint.ref.startsWith(refs.prefix)) expected.set(checkpoint.ref, checkpoint.object);
  if (best !== null) expected.set(refs.best, best);
  if (open != null) expected.set(refs.pending, open.before);
  return expected;
}

/**
 * Points every ref that does not name what `expected` says (moved or deleted) back at it; returns the moves. A
 * `…/pending` ref `expected` does not hold (the ledger has no open tick) is the engine's own leftover of a process
 * killed after it opened a tick and before the ledger recorded it, or after the tick's record was saved and before
 * {@link closeTick}: it is deleted, not reported.
 */
export async function restoreMovedRefs(
  git: GitSnapshots,
  prefix: string,
  expected: ReadonlyMap<string, string>,
): Promise<RefMove[]> {
  const found = await git.listRefs(prefix);
  const pending = `${prefix}pending`;
  if (found.has(pending) && !expected.has(pending)) await git.deleteRef(pending);
  const moves: RefMove[] = [];
  for (const [ref, commit] of expected) {
    const actual = found.get(ref) ?? null;
    if (actual === commit) continue;
    await git.pointRef(ref, commit);
    moves.push({ ref, expected: commit, found: actual });
  }
  return moves;
}

/**
 * Checks the run's refs against the ledger (at each tick and at the end): a ref moved to another commit (or
 * deleted) by anyone but the engine is a violation (`checkpoint_ref_moved`), journaled, shown and put back, so
 * the commit the report names is the one `refs/allium-loop/<slug>/best` holds.
 */
export async function guardRunRefs(
  session: ModeSession,
  git: GitSnapshots,
  best: string | null,
  open: OpenTick | null | undefined,
): Promise<readonly RefMove[]> {
  const prefix = climbRefs(session.ledger.slug).prefix;
  const moves = await restoreMovedRefs(git, prefix, expectedRefs(session.ledger, best, open));
  if (moves.length === 0) return moves;
  const at = new Date(session.now()).toISOString();
  const events: JournalEvent[] = moves.map((move) => ({
    type: 'violation',
    at,
    tick: session.ledger.tick,
    kind: 'checkpoint_ref_moved',
    path: move.ref,
    detail: `${move.ref} ${move.found === null ? 'was deleted' : `was moved to ${move.found}`}; the ledger records ${move.expected}, and the ref points there again`,
    reverted: true,
  }));
  await session.persist(session.ledger, events);
  return moves;
}

/**
 * `/loop`'s restart rule, on resume: HEAD is not the revision the run last recorded (a commit made after a crash,
 * say). The new HEAD is kept reachable under `refs/allium-loop/<slug>/moved-<sha12>`, then the branch — only the
 * branch: `git reset --soft`, the index and the working tree stay as they are — goes back to the recorded
 * revision, so new checkpoints take it as their parent and nothing of the new commit is lost. Journals
 * `x-verify.head_reset` and says how to take the commit back. `missing` when the recorded commit is gone (then
 * nothing is moved).
 */
export async function resetToRecordedRevision(
  session: ModeSession,
  git: GitSnapshots,
  now: string,
  recorded: string,
): Promise<'reset' | 'missing'> {
  const keep = climbRefs(session.ledger.slug).moved(now);
  if (!(await git.commitExists(recorded))) {
    await session.persist(session.ledger, [session.event('head_moved', { recorded, now, reset: false })]);
    session.say(
      `HEAD moved since the run last recorded it: ${recorded.slice(0, 12)} → ${now.slice(0, 12)}, and ${recorded.slice(0, 12)} is no longer in the repository; the run goes on from HEAD.`,
    );
    return 'missing';
  }
  await git.pointRef(keep, now);
  await git.moveBranch(recorded);
  await session.persist(session.ledger, [session.event('head_reset', { recorded, now, kept: keep })]);
  session.say(
    `HEAD moved since the run last recorded it: ${recorded.slice(0, 12)} → ${now.slice(0, 12)}. The branch is back at ${recorded.slice(0, 12)} (the recorded revision; your files and index are as they were), and ${now.slice(0, 12)} is kept as ${keep}: 'git reset --soft ${keep}' puts it back.`,
  );
  return 'reset';
}

// Where the makespan of a `--concurrency N` wave goes, read from the run's journal alone: the wave's notes
// (slice_started / slice_finished / slice_merged / slice_worktree_removed, which carry the engine's own timings) and
// the per-call intents (intent_begun / intent_ended, timestamped). Pure: events in, figures out.

export type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- journal lines read loosely

/** One slice of an at-once wave, as its journal shows it (times in ms since the wave began). */
export interface SliceTimeline {
  readonly id: string;
  readonly dependsOn: readonly string[];
  /** When every slice it depends on was merged (the wave's start for a slice without dependencies). */
  readonly readyMs: number;
  /** When the supervisor began to start it (before its worktree was made). */
  readonly launchMs: number;
  readonly worktreeMs: number;
  /** Its first agent call. */
  readonly firstCallMs: number;
  /** Its loop's end (its witness passed): first call → here is the slice's own work. */
  readonly loopEndMs: number;
  /** Its agent calls' time, summed (they wait on a timer in the bench: no CPU). */
  readonly agentMs: number;
  readonly commitMs: number;
  readonly finishedMs: number;
  readonly mergeBeganMs: number;
  /** `git merge-tree`, the merge commit and the main tree moved to it. */
  readonly mergeGitMs: number;
  /** The witness on the merged tree: the tests (unless reused) and its checks. */
  readonly mergeWitnessMs: number;
  readonly mergeTestsRun: boolean;
  readonly mergedMs: number;
  readonly removeMs: number;
}

export interface WaveTimeline {
  /** The wave's start: the supervisor's first note (before any worktree). */
  readonly startAt: number;
  /** The integration pass's first call, ms since the start: the wave's makespan. */
  readonly makespanMs: number;
  readonly slices: ReadonlyMap<string, SliceTimeline>;
}

const at = (event: Json) => Date.parse(String(event['at']));
const kind = (event: Json): unknown => event['data']?.['event'];
const sliceOf = (event: Json): unknown => event['data']?.['slice'];

/** The intents (agent calls) of a slice: `[begun, ended]` pairs by key. */
function calls(journal: readonly Json[], id: string): { begun: number; ended: number }[] {
  const prefix = `slice:${id}/`;
  const begun = new Map<string, number>();
  const out: { begun: number; ended: number }[] = [];
  for (const event of journal) {
    const key = String(event['key'] ?? '');
    if (!key.startsWith(prefix)) continue;
    if (event['type'] === 'intent_begun') begun.set(key, at(event));
    if (event['type'] === 'intent_ended' && begun.has(key))
      out.push({ begun: begun.get(key)!, ended: at(event) });
  }
  return out;
}

/** The first call of the integration pass (the wave's end). */
export function integrationStart(journal: readonly Json[]): number {
  const first = journal.find(
    (e) => e['type'] === 'intent_begun' && String(e['key']).startsWith('slice:integration/'),
  );
  if (first === undefined) throw new Error('the journal has no call of the integration pass');
  return at(first);
}

/**
 * The timeline of an at-once wave. Only the last round of a slice counts (a slice sent round again shows its
 * final, merged round; the bench's scripted agent never conflicts).
 */
export function waveTimeline(
  journal: readonly Json[],
  dependsOn: Record<string, readonly string[]>,
): WaveTimeline {
  const waveNote = journal.find(
    (e) => e['type'] === 'note' && String(e['message']).startsWith('slices run at once from merged base'),
  );
  if (waveNote === undefined) throw new Error('the journal has no wave run at once');
  const start = at(waveNote);
  const rel = (t: number) => t - start;
  const last = (event: string, id: string) =>
    journal.filter((e) => kind(e) === event && sliceOf(e) === id).at(-1);
  const merged = new Map<string, number>();
  for (const id of Object.keys(dependsOn)) {
    const note = last('slice_merged', id);
    if (note === undefined) throw new Error(`slice ${id} was never merged`);
    merged.set(id, rel(at(note)));
  }
  const slices = new Map<string, SliceTimeline>();
  for (const [id, deps] of Object.entries(dependsOn)) {
    const started = last('slice_started', id)!;
    const finished = last('slice_finished', id)!;
    const mergedNote = last('slice_merged', id)!;
    const removed = last('slice_worktree_removed', id);
    const d = (event: Json, field: string) => Number(event['data']?.[field] ?? 0);
    const own = calls(journal, id).filter((c) => c.begun >= at(started));
    const worktreeMs = d(started, 'worktreeMs');
    const commitMs = d(finished, 'commitMs');
    const totalMs = d(mergedNote, 'totalMs');
    slices.set(id, {
      id,
      dependsOn: deps,
      readyMs: Math.max(0, ...deps.map((dep) => merged.get(dep) ?? 0)),
      launchMs: rel(at(started)) - worktreeMs,
      worktreeMs,
      firstCallMs: rel(Math.min(...own.map((c) => c.begun))),
      loopEndMs: rel(at(finished)) - commitMs,
      agentMs: own.reduce((sum, c) => sum + c.ended - c.begun, 0),
      commitMs,
      finishedMs: rel(at(finished)),
      mergeBeganMs: rel(at(mergedNote)) - totalMs,
      mergeGitMs: d(mergedNote, 'mergeMs'),
      mergeWitnessMs: d(mergedNote, 'witnessMs'),
      mergeTestsRun: mergedNote['data']?.['testsRun'] !== false,
      mergedMs: rel(at(mergedNote)),
      removeMs: removed === undefined ? 0 : d(removed, 'removeMs'),
    });
  }
  return { startAt: start, makespanMs: rel(integrationStart(journal)), slices };
}

/**
 * The critical path as issue 20 means it, "the critical path (plus the merges' test runs)": the longest dependency
 * chain, each slice weighing its own work (`work`: first agent call → its witness passed) plus its merge's witness
 * on the merged tree. Nothing the engine adds around that counts: no worktree, commit, git merge, idle wait.
 */
export function criticalPath(
  dependsOn: Record<string, readonly string[]>,
  work: (id: string) => number,
  merge: (id: string) => number,
): { readonly ms: number; readonly chain: readonly string[] } {
  const memo = new Map<string, { ms: number; chain: string[] }>();
  const finish = (id: string): { ms: number; chain: string[] } => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const before = (dependsOn[id] ?? [])
      .filter((d) => d in dependsOn)
      .map(finish)
      .reduce((a, b) => (b.ms > a.ms ? b : a), { ms: 0, chain: [] as string[] });
    const value = { ms: before.ms + work(id) + merge(id), chain: [...before.chain, id] };
    memo.set(id, value);
    return value;
  };
  return Object.keys(dependsOn)
    .map(finish)
    .reduce((a, b) => (b.ms > a.ms ? b : a), { ms: 0, chain: [] as string[] });
}

/**
 * The makespan split along the chain that actually ended the wave: walking back from the last merge through the
 * dependency that was merged last, every stretch of wall time is one of these. They add up to the makespan.
 */
export function makespanBreakdown(wave: WaveTimeline): Record<string, number> {
  const parts: Record<string, number> = {
    'idle before a start': 0,
    worktree: 0,
    'loop start → first call': 0,
    'agent calls': 0,
    'between calls (own test runs, engine)': 0,
    commit: 0,
    'waiting for the merge in flight': 0,
    'git merge': 0,
    'merge witness': 0,
    'merge bookkeeping': 0,
    'last merge → integration': 0,
  };
  const slices = [...wave.slices.values()];
  let current = slices.reduce((a, b) => (b.mergedMs > a.mergedMs ? b : a));
  parts['last merge → integration'] = wave.makespanMs - current.mergedMs;
  for (;;) {
    const s = current;
    parts['merge bookkeeping']! += s.mergedMs - s.mergeBeganMs - s.mergeGitMs - s.mergeWitnessMs;
    parts['merge witness']! += s.mergeWitnessMs;
    parts['git merge']! += s.mergeGitMs;
    parts['waiting for the merge in flight']! += s.mergeBeganMs - s.finishedMs;
    parts['commit']! += s.finishedMs - s.loopEndMs;
    const run = s.loopEndMs - s.firstCallMs;
    parts['agent calls']! += s.agentMs;
    parts['between calls (own test runs, engine)']! += run - s.agentMs;
    parts['loop start → first call']! += s.firstCallMs - s.launchMs - s.worktreeMs;
    parts['worktree']! += s.worktreeMs;
    parts['idle before a start']! += s.launchMs - s.readyMs;
    const producer = s.dependsOn
      .map((d) => wave.slices.get(d))
      .filter((d) => d !== undefined)
      .reduce<SliceTimeline | undefined>(
        (a, b) => (a === undefined || b.mergedMs > a.mergedMs ? b : a),
        undefined,
      );
    if (producer === undefined) {
      // The wave's start to this chain's first launch is idle too (the supervisor's own set-up before it).
      break;
    }
    current = producer;
  }
  return parts;
}

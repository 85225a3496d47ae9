import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { DEFAULT_POLICY } from '@allium-loop/evaluator';
import {
  createLedger,
  createMemoryLedgerStore,
  type JournalEvent,
  type Ledger,
  type MemoryLedgerStore,
} from '@allium-loop/ledger';
import type { ProjectMeasurement } from '@allium-loop/verify';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CAPS, type LoopConfig, type LoopPhase } from '../decide/loop-state.js';
import type {
  LoopPorts,
  MeasureReport,
  PhaseReport,
  PhaseRequest,
  PlannedSlice,
} from '../driver/loop-ports.js';
import { runLoop } from '../driver/run-loop.js';
import { reopenRun } from '../runs/reopen-run.js';
import { createGitWorktrees, type SliceWorkspaces } from './git-worktrees.js';

const SLUG = 'add-rooms';
const clock = { now: () => Date.now() };
const dirs: string[] = [];

afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function git(cwd: string, ...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd })).stdout;
}

/** A real git repository with one commit. */
async function repo(files: Record<string, string> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'allium-loop-parallel-'));
  dirs.push(dir);
  await git(dir, 'init', '-q', '-b', 'main');
  await git(dir, 'config', 'user.email', 'dev@example.com');
  await git(dir, 'config', 'user.name', 'dev');
  await writeFile(join(dir, '.gitignore'), '.allium-loop/\nnode_modules/\n');
  for (const [path, text] of Object.entries({ 'README.md': 'rooms\n', ...files })) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  await git(dir, 'add', '-A');
  await git(dir, 'commit', '-q', '-m', 'start');
  return dir;
}

function phaseReport(
  phase: LoopPhase,
  extra: Partial<PhaseReport['observation']> = {},
  costUsd = 0.1,
): PhaseReport {
  return {
    observation: { kind: 'phase_done', phase, ok: true, costUsd, ...extra },
    events: [],
    questions: [],
    costKnown: true,
    durationMs: 1,
  };
}

/**
 * The slices' "tests": a slice's `rooms/<name>.test` without its `rooms/<name>.impl` fails, and so does a
 * `rooms/<name>.forbids` naming a room whose `.impl` exists.
 */
async function failingIn(cwd: string): Promise<string[]> {
  const files = await readdir(join(cwd, 'rooms')).catch(() => [] as string[]);
  const missing = files
    .filter((f) => f.endsWith('.test'))
    .map((f) => f.slice(0, -'.test'.length))
    .filter((name) => !files.includes(`${name}.impl`));
  const clashes: string[] = [];
  for (const file of files.filter((f) => f.endsWith('.forbids'))) {
    const other = (await readFile(join(cwd, 'rooms', file), 'utf8')).trim();
    if (files.includes(`${other}.impl`)) clashes.push(file);
  }
  return [...missing, ...clashes];
}

async function measured(cwd: string): Promise<MeasureReport> {
  const failing = await failingIn(cwd);
  return {
    observation: {
      kind: 'measured',
      measurement: {
        tests: {
          counts: 'known',
          passed: 1,
          failed: failing.length,
          skipped: 0,
          failing,
          exitCode: failing.length > 0 ? 1 : 0,
        },
        structuralErrors: 0,
        openQuestions: { blocking: 0, parked: 0 },
      },
    },
    structuralMessages: [],
    git: { head: null, tree: null },
  };
}

/** What a scripted agent does, per slice and phase, in the folder its loop works in. */
type Script = (request: PhaseRequest, cwd: string) => Promise<void>;

const nameOf = (request: PhaseRequest) => (request.focus.slice?.id ?? 'run').replace(/^room:/, '');

/** Propagate writes the slice's test, implement its code; `extra` runs first (barriers, shared files). */
function roomsScript(extra: Script = async () => undefined): Script {
  return async (request, cwd) => {
    await extra(request, cwd);
    const name = nameOf(request);
    await mkdir(join(cwd, 'rooms'), { recursive: true });
    if (request.phase === 'propagate') await writeFile(join(cwd, 'rooms', `${name}.test`), name);
    if (request.phase === 'implement') await writeFile(join(cwd, 'rooms', `${name}.impl`), name);
  };
}

/** Scripted loop ports working in `cwd`: the script edits files, the measure and witness read them. */
function portsIn(cwd: string, script: Script, calls: string[]): LoopPorts {
  return {
    runPhase: async (request) => {
      calls.push(request.key);
      if (request.phase === 'tend') return phaseReport('tend', { specChanged: true });
      await script(request, cwd);
      if (request.phase === 'propagate') return phaseReport('propagate', { newTests: [] });
      return phaseReport(request.phase, request.phase === 'weed' ? { divergences: [] } : {});
    },
    redCheck: async () => ({ passing: [], failing: [] }),
    measure: async () => measured(cwd),
    reconcile: async () => undefined,
    witness: async (request) => {
      const failing = await failingIn(cwd);
      const pass = failing.length === 0;
      return {
        result: {
          phase: 'witness',
          verdict: pass ? 'PASS' : 'FAIL',
          checks: [
            {
              name: 'tests-pass',
              result: pass ? 'pass' : 'fail',
              ground_truth: `failing: ${failing.join(', ')}`,
            },
          ],
          violations: pass ? [] : [{ violation: `failing ${failing.join(', ')}`, routing: 'implement' }],
          record_path: `.allium-loop/${SLUG}.witness.json`,
          summary: `witness: ${pass ? 'PASS' : 'FAIL'} · ${request.slice ?? 'run'}`,
        },
        failing,
        tampered: [],
        // What a real witness keeps of its test run: here, where it ran.
        measured: (request.measured ?? { ranIn: cwd }) as unknown as ProjectMeasurement,
      };
    },
    restoreTests: async () => [],
  };
}

const config: LoopConfig = {
  entry: 'tend',
  mode: 'spec-first',
  caps: DEFAULT_CAPS,
  policy: DEFAULT_POLICY,
  interactive: false,
  decompose: true,
};

function plan(names: readonly string[], deps: Record<string, string[]> = {}): PlannedSlice[] {
  const slices = names.map((n) => ({
    id: `room:${n}`,
    constructs: [`entity:${n}`],
    dependsOn: (deps[n] ?? []).map((d) => `room:${d}`),
  }));
  return [...slices, { id: 'integration', constructs: [], dependsOn: slices.map((s) => s.id), chains: [] }];
}

async function runRooms(options: {
  readonly dir: string;
  readonly slices: PlannedSlice[];
  readonly script: Script;
  readonly concurrency?: number;
  readonly caps?: Partial<LoopConfig['caps']>;
  /** Wraps the real worktrees (to make one of their git steps fail). */
  readonly workspaces?: (real: SliceWorkspaces) => SliceWorkspaces;
  /** The store of a run that ended: it is resumed (reopened as `allium-loop resume` does) instead of started. */
  readonly resume?: MemoryLedgerStore;
}) {
  const store = options.resume ?? createMemoryLedgerStore();
  const { lease } = await store.acquire(SLUG);
  let ledger = createLedger({ goal: 'add rooms', slug: SLUG, mode: 'spec', now: new Date(0) });
  if (options.resume === undefined) await store.save(lease, ledger);
  else {
    const loaded = await store.load(SLUG);
    if (!loaded.ok) throw new Error('no ledger to resume');
    ledger = reopenRun(loaded.value.ledger) ?? loaded.value.ledger;
  }
  const calls: string[] = [];
  const main = portsIn(options.dir, options.script, calls);
  // The witness runs in the main tree only at merges and at the end: each slice's scope as it asked for it.
  const witnessedInMain: { slice?: string; constructs?: readonly string[] }[] = [];
  /** The merges whose witness was handed the slice's own test run (the tree it saw in its worktree). */
  const reusedInMain: { slice?: string; ranIn: unknown }[] = [];
  const witness = main.witness;
  main.witness = async (request) => {
    if (request.measured !== undefined)
      reusedInMain.push({
        ...(request.slice === undefined ? {} : { slice: request.slice }),
        ranIn: (request.measured as unknown as { ranIn: unknown }).ranIn,
      });
    witnessedInMain.push({
      ...(request.slice === undefined ? {} : { slice: request.slice }),
      ...(request.constructs === undefined ? {} : { constructs: request.constructs }),
    });
    return witness(request);
  };
  const final = await runLoop({
    store,
    lease,
    ledger,
    config: { ...config, caps: { ...DEFAULT_CAPS, ...options.caps } },
    ports: { ...main, plan: async () => options.slices },
    clock,
    signal: new AbortController().signal,
    parallel: {
      concurrency: options.concurrency ?? 2,
      workspaces: (options.workspaces ?? ((real) => real))(await createGitWorktrees(options.dir, SLUG)),
      portsFor: (cwd) => portsIn(cwd, options.script, calls),
    },
  });
  const journal = (await store.readJournal(SLUG)).events;
  // As the CLI does when the run ends: nothing may write under this lease any more.
  await store.release(lease);
  return { final, journal, calls, witnessedInMain, reusedInMain, store, stored: await store.load(SLUG) };
}

const parallelNotes = (journal: readonly JournalEvent[]) =>
  journal.flatMap((e) =>
    e.type === 'note' && e.data?.['parallel'] === true && e.data['event'] !== undefined
      ? [`${String(e.data['event'] ?? '')} ${String(e.data['slice'] ?? '')}`.trim()]
      : [],
  );

async function worktreesLeft(dir: string): Promise<string[]> {
  const list = await git(dir, 'worktree', 'list', '--porcelain');
  const branches = await git(dir, 'for-each-ref', '--format=%(refname)', 'refs/heads/allium-loop/');
  return [
    ...list
      .split('\n')
      .filter((l) => l.startsWith('worktree '))
      .slice(1),
    ...branches.split('\n').filter((b) => b !== ''),
  ];
}

/** Resolves once `ready()` holds, checked whenever `poke` is called: an event wait, never a sleep. */
function barrier() {
  const waiters: (() => void)[] = [];
  const seen = new Set<string>();
  return {
    mark(id: string) {
      seen.add(id);
      for (const wake of waiters.splice(0)) wake();
    },
    async waitFor(id: string) {
      while (!seen.has(id)) await new Promise<void>((resolve) => waiters.push(resolve));
    },
  };
}

describe('--concurrency: slices at once in worktrees', () => {
  it(
    'runs two independent slices at once, each in its own worktree, merges both and leaves no worktree',
    { timeout: 120_000 },
    async () => {
      const dir = await repo();
      const meeting = barrier();
      const cwds = new Map<string, string>();
      // Each slice's implement waits until the other slice has propagated: run one after the other, this never ends.
      const script = roomsScript(async (request, cwd) => {
        const name = nameOf(request);
        cwds.set(name, cwd);
        if (request.phase === 'propagate') meeting.mark(name);
        if (request.phase === 'implement') await meeting.waitFor(name === 'kitchen' ? 'hall' : 'kitchen');
      });
      const { final, journal, witnessedInMain, reusedInMain } = await runRooms({
        dir,
        slices: plan(['kitchen', 'hall']),
        script,
      });
      expect(final.terminal?.state).toBe('converged');
      // The witness after each merge counts only the merged slice's own constructs, as in its worktree.
      expect(
        witnessedInMain
          .filter((w) => w.slice?.startsWith('room:'))
          .sort((a, b) => a.slice!.localeCompare(b.slice!)),
      ).toEqual([
        { slice: 'room:hall', constructs: ['entity:hall'] },
        { slice: 'room:kitchen', constructs: ['entity:kitchen'] },
      ]);
      expect(final.subGoals.map((g) => [g.id, g.status])).toEqual([
        ['room:kitchen', 'converged'],
        ['room:hall', 'converged'],
        ['integration', 'converged'],
      ]);
      // Overlap by events: both slices started before either finished.
      const events = parallelNotes(journal);
      expect(events.slice(0, 2).sort()).toEqual(['slice_started room:hall', 'slice_started room:kitchen']);
      expect(events.indexOf('slice_started room:hall')).toBeLessThan(
        events.findIndex((e) => e.startsWith('slice_finished')),
      );
      // Both merged (independent slices merge as they finish), each in its own worktree outside the project.
      expect(events.filter((e) => e.startsWith('slice_merged')).sort()).toEqual([
        'slice_merged room:hall',
        'slice_merged room:kitchen',
      ]);
      expect(cwds.get('kitchen')).not.toBe(cwds.get('hall'));
      expect(cwds.get('kitchen')!.startsWith(dir)).toBe(false);
      // The main tree holds both slices' work; the ledger has both slices' sections and every call's spend.
      // (the integration pass runs after the wave, in the main tree.)
      expect((await readdir(join(dir, 'rooms'))).sort()).toEqual([
        'hall.impl',
        'hall.test',
        'integration.impl',
        'integration.test',
        'kitchen.impl',
        'kitchen.test',
      ]);
      const record = final.modeState.kind === 'spec' ? final.modeState : undefined;
      expect(Object.keys(record?.slices ?? {}).sort()).toEqual(['integration', 'room:hall', 'room:kitchen']);
      const mergedSlices = record?.parallel?.mergedSlices ?? [];
      expect([...mergedSlices].sort()).toEqual(['room:hall', 'room:kitchen']);
      // The first merge left the slice's own tree: the witness there was handed the test run its witness made in
      // its worktree. The second merge's tree holds both slices: its tests ran again.
      const first = mergedSlices[0]!.replace(/^room:/, '');
      expect(reusedInMain).toEqual([{ slice: mergedSlices[0], ranIn: cwds.get(first) }]);
      expect(
        final.intents
          .filter((i) => i.key.startsWith('slice:room:'))
          .every((i) => i.outcome?.status === 'succeeded'),
      ).toBe(true);
      expect(final.spent.agentCalls).toBe(final.intents.length);
      expect(await worktreesLeft(dir)).toEqual([]);
      expect(existsSync(cwds.get('kitchen')!)).toBe(false);
    },
  );

  it(
    'starts a dependent slice only after its producer is merged, from the merged base',
    { timeout: 120_000 },
    async () => {
      const dir = await repo();
      const seen: Record<string, string[]> = {};
      const script = roomsScript(async (request, cwd) => {
        if (request.phase === 'propagate')
          seen[nameOf(request)] = (await readdir(join(cwd, 'rooms')).catch(() => [] as string[])).sort();
      });
      const { final, journal } = await runRooms({
        dir,
        slices: plan(['hall', 'kitchen'], { kitchen: ['hall'] }),
        script,
      });
      expect(final.terminal?.state).toBe('converged');
      const events = parallelNotes(journal);
      expect(events.indexOf('slice_started room:kitchen')).toBeGreaterThan(
        events.indexOf('slice_merged room:hall'),
      );
      expect(seen['kitchen']).toEqual(['hall.impl', 'hall.test']);
    },
  );

  it(
    'sends a slice whose merge conflicts round again on the merged base, never an unverified resolution',
    { timeout: 120_000 },
    async () => {
      const dir = await repo({ 'doors.txt': 'doors\n' });
      // Both slices rewrite doors.txt; on the merged base the second one appends instead (what an agent would do).
      const script = roomsScript(async (request, cwd) => {
        if (request.phase !== 'implement' || request.focus.slice?.integration === true) return;
        const file = join(cwd, 'doors.txt');
        const text = await readFile(file, 'utf8');
        const name = nameOf(request);
        await writeFile(file, text === 'doors\n' ? `doors of ${name}\n` : `${text}doors of ${name}\n`);
      });
      const { final, journal } = await runRooms({ dir, slices: plan(['kitchen', 'hall']), script });
      expect(final.terminal?.state).toBe('converged');
      // Whichever slice is merged second conflicts on doors.txt and goes round again on the merged base.
      const again = journal.filter((e) => e.type === 'note' && / goes round again /.test(e.message));
      expect(again).toHaveLength(1);
      expect(again[0]?.type === 'note' ? again[0].message : '').toContain('merge conflict in doors.txt');
      expect(parallelNotes(journal).filter((e) => e.startsWith('slice_merged'))).toHaveLength(2);
      const doors = (await readFile(join(dir, 'doors.txt'), 'utf8'))
        .split('\n')
        .filter((l) => l !== '')
        .sort();
      expect(doors).toEqual(['doors of hall', 'doors of kitchen']);
      expect(await worktreesLeft(dir)).toEqual([]);
    },
  );

  it('sends a slice that turns the merged suite red round again', { timeout: 120_000 }, async () => {
    const dir = await repo();
    // Alone each slice is green; together the hall's first round (a `hall.forbids` naming the kitchen) is red.
    // Whichever slice merges second goes round again on the merged base, where it removes the clash.
    const script = roomsScript(async (request, cwd) => {
      if (request.phase !== 'propagate') return;
      const name = nameOf(request);
      const other = name === 'hall' ? 'kitchen' : 'hall';
      await mkdir(join(cwd, 'rooms'), { recursive: true });
      const merged = existsSync(join(cwd, 'rooms', `${other}.impl`));
      if (merged) await rm(join(cwd, 'rooms', 'hall.forbids'), { force: true });
      else if (name === 'hall') await writeFile(join(cwd, 'rooms', 'hall.forbids'), 'kitchen');
    });
    const { final, journal } = await runRooms({ dir, slices: plan(['kitchen', 'hall']), script });
    expect(final.terminal?.state).toBe('converged');
    const again = journal.filter((e) => e.type === 'note' && / goes round again /.test(e.message));
    expect(again).toHaveLength(1);
    expect(again[0]?.type === 'note' ? again[0].message : '').toContain('red after merge');
    expect(parallelNotes(journal).filter((e) => e.startsWith('slice_merged'))).toHaveLength(2);
    expect(existsSync(join(dir, 'rooms', 'hall.forbids'))).toBe(false);
    expect(await worktreesLeft(dir)).toEqual([]);
  });

  it(
    'holds the budget across slices: calls in flight count, the total never passes it',
    { timeout: 120_000 },
    async () => {
      const dir = await repo();
      const { final, stored } = await runRooms({
        dir,
        slices: plan(['kitchen', 'hall', 'attic']),
        script: roomsScript(),
        concurrency: 3,
        caps: { budgetUsd: 0.65, maxCallUsd: 0.1 },
      });
      expect(final.terminal?.state).toBe('budget_exhausted');
      expect(final.spent.usd!).toBeLessThanOrEqual(0.65 + 1e-9);
      expect(stored.ok).toBe(true);
      expect(await worktreesLeft(dir)).toEqual([]);
    },
  );

  it(
    'stops every slice loop still running before a failure of the wave itself ends the run',
    { timeout: 120_000 },
    async () => {
      const dir = await repo();
      // The kitchen's implement call runs until it is cancelled; the hall converges, and committing its worktree
      // fails (git, not a slice's port: the wave itself fails). Before the fix the run ended with the kitchen's
      // call still running, on a worktree just removed, its loop left to write after the lease was let go.
      let inFlight = 0;
      let kitchenCancelled = false;
      const script = roomsScript(async (request) => {
        if (nameOf(request) !== 'kitchen' || request.phase !== 'implement') return;
        inFlight += 1;
        try {
          await new Promise<void>((resolve) => {
            if (request.signal.aborted) resolve();
            else request.signal.addEventListener('abort', () => resolve(), { once: true });
          });
          kitchenCancelled = true;
          throw new Error('cancelled');
        } finally {
          inFlight -= 1;
        }
      });
      const { final, stored, store } = await runRooms({
        dir,
        slices: plan(['kitchen', 'hall']),
        script,
        workspaces: (real) => ({
          ...real,
          commit: async (workspace) => {
            if (workspace.sliceId === 'room:hall')
              throw new Error('git commit: no space left on device (scripted)');
            return real.commit(workspace);
          },
        }),
      });
      expect(final.terminal?.state).toBe('failed');
      expect(final.terminal?.detail ?? '').toContain('no space left on device (scripted)');
      // Nothing of the wave ran on after the run ended: the kitchen's call was cancelled and had returned.
      expect(kitchenCancelled).toBe(true);
      expect(inFlight).toBe(0);
      expect(stored.ok).toBe(true);
      expect(await worktreesLeft(dir)).toEqual([]);
      // And the run resumes from there: both slices start again in new worktrees, and it converges.
      const resumed = await runRooms({
        dir,
        slices: plan(['kitchen', 'hall']),
        script: roomsScript(),
        resume: store,
      });
      expect(resumed.final.terminal?.state).toBe('converged');
      expect(resumed.final.subGoals.map((g) => [g.id, g.status])).toEqual([
        ['room:kitchen', 'converged'],
        ['room:hall', 'converged'],
        ['integration', 'converged'],
      ]);
      expect(await worktreesLeft(dir)).toEqual([]);
    },
  );
});

export type { Ledger };

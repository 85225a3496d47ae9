// Benchmark: the makespan of `allium-loop run --concurrency 4` against the plan's critical path (plus the merges'
// test runs) and against `--concurrency 1`, on a generated spec with a known slice DAG and a scripted agent of fixed
// latency (latency-agent.mjs: answers by slice, never by call order). Each run is the real CLI in a fresh git repo.
// Run: node --conditions=development --import tsx tools/bench/parallel/concurrency-makespan.ts [--reps 3] [--latency-ms 3000] [--width 4] [--keep]
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { makespanArgs } from './makespan-args.js';
import {
  criticalPath,
  integrationStart,
  makespanBreakdown,
  waveTimeline,
  type Json,
  type SliceTimeline,
} from './wave-timeline.js';

const exec = promisify(execFile);
const ARGS = makespanArgs();
const REPS = ARGS.reps;
const LATENCY = ARGS.latencyMs;
const NAMES = ARGS.names;
const WIDTH = NAMES.length;
const MAIN = fileURLToPath(new URL('../../../packages/cli/src/main.ts', import.meta.url));
const TSX = new URL('../../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const AGENT = fileURLToPath(new URL('./latency-agent.mjs', import.meta.url));
const GOAL = 'add the things and their tally';
const SLUG = 'add-the-things-and-their-tally';

/**
 * WIDTH independent lifecycles (wave 1: an entity and one rule each), then `Tally`, created by a rule that reads the
 * first of them (wave 2, after it), then the integration pass: a known DAG of depth 2 plus integration.
 */
function spec(): string {
  const things = NAMES.map((name) => {
    const v = name.toLowerCase();
    return `entity ${name} {\n    status: off | on\n}\n\nrule Start${name} {\n    when: Start${name}(${v})\n    requires: ${v}.status = off\n    ensures: ${v}.status = on\n}\n`;
  });
  const first = NAMES[0]!.toLowerCase();
  return `-- allium: 3\n\nentity House {\n    name: String\n}\n\n${things.join('\n')}\nentity Tally {\n    count: Integer\n}\n\nrule CountStarted {\n    when: CountStarted(${first})\n    requires: ${first}.status = on\n    ensures: Tally.created(count: 1)\n}\n`;
}

interface Run {
  readonly journal: readonly Json[];
  readonly dependsOn: Record<string, readonly string[]>;
}

async function once(concurrency: number, work: string): Promise<Run> {
  const dir = join(work, `c${String(concurrency)}`);
  await mkdir(join(dir, 'specs'), { recursive: true });
  await mkdir(join(dir, 'src'), { recursive: true });
  await writeFile(join(dir, 'package.json'), '{ "type": "module", "private": true }\n');
  await writeFile(join(dir, 'allium-loop.yaml'), 'testCommand: node --test\n');
  await writeFile(join(dir, 'specs/things.allium'), '-- allium: 3\n\nentity House {\n    name: String\n}\n');
  await writeFile(join(dir, 'src/house.js'), 'export {};\n');
  const specFile = join(work, 'things.allium');
  await writeFile(specFile, spec());
  const git = (...args: string[]) =>
    exec('git', ['-c', 'user.name=b', '-c', 'user.email=b@localhost', ...args], { cwd: dir });
  await git('init', '-q');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'start');
  const args = [
    '--conditions=development',
    '--import',
    TSX,
    MAIN,
    'run',
    GOAL,
    '--concurrency',
    String(concurrency),
  ];
  args.push(
    '--agent',
    'command',
    '--agent-command',
    `node ${AGENT} ${String(LATENCY)} ${specFile} {phase} {result_file}`,
  );
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, args, {
      cwd: dir,
      stdio: 'ignore',
      env: { ...process.env, CI: 'true' },
    });
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`--concurrency ${String(concurrency)} exited ${String(code)} in ${dir}`);
  const ledger = JSON.parse(await readFile(join(dir, '.allium-loop', `${SLUG}.json`), 'utf8')) as Json;
  const journal = (await readFile(join(dir, '.allium-loop', `${SLUG}.events.ndjson`), 'utf8'))
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Json);
  const goals = (ledger['subGoals'] as Json[]).filter((g) => g['id'] !== 'integration');
  if (goals.length !== WIDTH + 1)
    throw new Error(`expected ${String(WIDTH + 1)} slices, the plan has ${String(goals.length)} (${dir})`);
  if (!ARGS.keep) await rm(dir, { recursive: true, force: true });
  return {
    journal,
    dependsOn: Object.fromEntries(
      goals.map((g) => [String(g['id']), (g['dependsOn'] as string[]).filter((d) => d !== 'integration')]),
    ),
  };
}

/**
 * One at a time: each slice's own work, uncontended (its first call to the next slice's first call, or to the
 * integration pass's), and the makespan (the first slice call to the integration pass's first call).
 */
function oneAtATime(run: Run): { readonly makespanMs: number; readonly work: Record<string, number> } {
  const firsts = Object.keys(run.dependsOn)
    .map((id) => {
      const first = run.journal.find(
        (e) => e['type'] === 'intent_begun' && String(e['key']).startsWith(`slice:${id}/`),
      );
      if (first === undefined) throw new Error(`slice ${id} made no call`);
      return { id, at: Date.parse(String(first['at'])) };
    })
    .sort((a, b) => a.at - b.at);
  const end = integrationStart(run.journal);
  const work: Record<string, number> = {};
  firsts.forEach((f, i) => (work[f.id] = (firsts[i + 1]?.at ?? end) - f.at));
  return { makespanMs: end - firsts[0]!.at, work };
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

interface Row {
  readonly load: string;
  readonly at4: number;
  readonly at1: number;
  /** The critical path of the at-once run's own slice and merge-witness times: what the engine's scheduling adds. */
  readonly critical: number;
  /** The same with each slice's uncontended time (one at a time): what this machine's CPU contention adds too. */
  readonly criticalAlone: number;
  readonly parts: Record<string, number>;
  readonly totals: Record<string, number>;
}

const rows: Row[] = [];
for (let rep = 1; rep <= REPS; rep += 1) {
  const work = await mkdtemp(join(tmpdir(), 'allium-loop-bench-concurrency-'));
  try {
    const load = loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
    const four = await once(4, work);
    const one = oneAtATime(await once(1, work));
    const wave = waveTimeline(four.journal, four.dependsOn);
    const s = (id: string) => wave.slices.get(id)!;
    const own = criticalPath(
      four.dependsOn,
      (id) => s(id).loopEndMs - s(id).firstCallMs,
      (id) => s(id).mergeWitnessMs,
    );
    const alone = criticalPath(
      four.dependsOn,
      (id) => one.work[id] ?? 0,
      (id) => s(id).mergeWitnessMs,
    );
    const all = [...wave.slices.values()];
    const sum = (f: (x: SliceTimeline) => number) => all.reduce((acc, x) => acc + f(x), 0);
    const totals = {
      'idle before starts (sum)': sum((x) => x.launchMs - x.readyMs),
      'worktree creation (sum)': sum((x) => x.worktreeMs),
      'worktree removal (sum, in the background)': sum((x) => x.removeMs),
      'commits (sum)': sum((x) => x.commitMs),
      'git merges (sum)': sum((x) => x.mergeGitMs),
      'merge witnesses (sum)': sum((x) => x.mergeWitnessMs),
      'between calls in slices (sum: own test runs, engine)': sum(
        (x) => x.loopEndMs - x.firstCallMs - x.agentMs,
      ),
    };
    const parts = makespanBreakdown(wave);
    rows.push({
      load,
      at4: wave.makespanMs,
      at1: one.makespanMs,
      critical: own.ms,
      criticalAlone: alone.ms,
      parts,
      totals,
    });
    console.log(
      `rep ${String(rep)} (load ${load}): --concurrency 4 ${sec(wave.makespanMs)}, --concurrency 1 ${sec(one.makespanMs)}; critical path ${sec(own.ms)} (${own.chain.join(' → ')}) → ${(wave.makespanMs / own.ms).toFixed(2)}×; uncontended critical path ${sec(alone.ms)} → ${(wave.makespanMs / alone.ms).toFixed(2)}×; speed-up ${(one.makespanMs / wave.makespanMs).toFixed(2)}×`,
    );
    console.log(
      `  along the chain that ended the wave: ${Object.entries(parts)
        .map(([k, v]) => `${k} ${sec(v)}`)
        .join(', ')}`,
    );
    console.log(
      `  over all slices: ${Object.entries(totals)
        .map(([k, v]) => `${k} ${sec(v)}`)
        .join(', ')}`,
    );
    console.log(
      `  merges: ${all
        .sort((a, b) => a.mergedMs - b.mergedMs)
        .map(
          (x) =>
            `${x.id} at ${sec(x.mergedMs)} (witness ${sec(x.mergeWitnessMs)}${x.mergeTestsRun ? '' : ', tests reused'})`,
        )
        .join(', ')}`,
    );
  } finally {
    if (!ARGS.keep) await rm(work, { recursive: true, force: true });
  }
}
const med = (f: (r: Row) => number) => median(rows.map(f));
console.log(
  `median of ${String(REPS)} (${String(availableParallelism())} cores, latency ${String(LATENCY)} ms, width ${String(WIDTH)}, load at the starts ${rows.map((r) => r.load).join(' / ')}): --concurrency 4 ${sec(med((r) => r.at4))}, --concurrency 1 ${sec(med((r) => r.at1))}, critical path ${sec(med((r) => r.critical))}, uncontended ${sec(med((r) => r.criticalAlone))}; ratio ${med((r) => r.at4 / r.critical).toFixed(2)}× the critical path (target ≤ 1.1×), ${med((r) => r.at4 / r.criticalAlone).toFixed(2)}× the uncontended one; speed-up ${med((r) => r.at1 / r.at4).toFixed(2)}×`,
);
console.log(
  `  median along the chain: ${Object.keys(rows[0]!.parts)
    .map((k) => `${k} ${sec(med((r) => r.parts[k]!))}`)
    .join(', ')}`,
);

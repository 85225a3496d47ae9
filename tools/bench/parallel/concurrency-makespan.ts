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

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- journal lines read loosely

interface Run {
  /** First slice call → first call of the integration pass: the slices, and (at once) their merges. */
  readonly waveMs: number;
  /** Each slice's own time: its first call → its witness. */
  readonly sliceMs: Record<string, number>;
  /** Each merge's own time (the merge and the tests and witness on the merged tree); none one at a time. */
  readonly mergeMs: Record<string, number>;
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
  const t = (e: Json) => Date.parse(String(e['at']));
  const firstCall = (id: string) =>
    Math.min(
      ...journal
        .filter((e) => e['type'] === 'intent_begun' && String(e['key']).startsWith(`slice:${id}/`))
        .map(t),
    );
  const sliceMs: Record<string, number> = {};
  const mergeMs: Record<string, number> = {};
  for (const goal of goals) {
    const id = String(goal['id']);
    const witnessed = journal
      .filter((e) => e['type'] === 'x-loop.witness' && e['data']?.['slice'] === id)
      .map(t);
    sliceMs[id] = Math.max(...witnessed) - firstCall(id);
  }
  // A merge's own time: from when it could start (its slice finished, the previous merge done) to its end.
  let previous = 0;
  for (const event of journal) {
    const kind = event['data']?.['event'];
    if (kind !== 'slice_merged' && kind !== 'slice_round_again') continue;
    const id = String(event['data']['slice']);
    const finished = Math.max(
      ...journal
        .filter(
          (e) => e['data']?.['event'] === 'slice_finished' && e['data']['slice'] === id && t(e) <= t(event),
        )
        .map(t),
    );
    mergeMs[id] = t(event) - Math.max(finished, previous);
    previous = t(event);
  }
  const start = Math.min(...goals.map((g) => firstCall(String(g['id']))));
  const integration = firstCall('integration');
  if (!ARGS.keep) await rm(dir, { recursive: true, force: true });
  return {
    waveMs: integration - start,
    sliceMs,
    mergeMs,
    dependsOn: Object.fromEntries(
      goals.map((g) => [String(g['id']), (g['dependsOn'] as string[]).filter((d) => d !== 'integration')]),
    ),
  };
}

/** The longest dependency chain, each slice weighing its uncontended time plus its merge's. */
function criticalPath(weight: (id: string) => number, dependsOn: Record<string, readonly string[]>): number {
  const memo = new Map<string, number>();
  const finish = (id: string): number => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const value =
      Math.max(0, ...(dependsOn[id] ?? []).filter((d) => d in dependsOn).map(finish)) + weight(id);
    memo.set(id, value);
    return value;
  };
  return Math.max(...Object.keys(dependsOn).map(finish));
}

const median = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

const rows: { at4: number; at1: number; critical: number }[] = [];
for (let rep = 1; rep <= REPS; rep += 1) {
  const work = await mkdtemp(join(tmpdir(), 'allium-loop-bench-concurrency-'));
  try {
    const load = loadavg()[0]!.toFixed(1);
    const four = await once(4, work);
    const one = await once(1, work);
    // Uncontended slice times (one at a time) plus the merges' own time (at once): the ideal with enough cores.
    const critical = criticalPath((id) => (one.sliceMs[id] ?? 0) + (four.mergeMs[id] ?? 0), four.dependsOn);
    rows.push({ at4: four.waveMs, at1: one.waveMs, critical });
    console.log(
      `rep ${String(rep)} (load ${load}): --concurrency 4 ${sec(four.waveMs)}, --concurrency 1 ${sec(one.waveMs)}, critical path ${sec(critical)} → ${(four.waveMs / critical).toFixed(2)}× critical path, ${(one.waveMs / four.waveMs).toFixed(2)}× speed-up`,
    );
    console.log(
      `  slices (1 at a time): ${Object.entries(one.sliceMs)
        .map(([k, v]) => `${k} ${sec(v)}`)
        .join(', ')}`,
    );
    console.log(
      `  merges (at once): ${Object.entries(four.mergeMs)
        .map(([k, v]) => `${k} ${sec(v)}`)
        .join(', ')}`,
    );
  } finally {
    if (!ARGS.keep) await rm(work, { recursive: true, force: true });
  }
}
const at4 = median(rows.map((r) => r.at4));
const at1 = median(rows.map((r) => r.at1));
const critical = median(rows.map((r) => r.critical));
console.log(
  `median of ${String(REPS)} (${String(availableParallelism())} cores, latency ${String(LATENCY)} ms, width ${String(WIDTH)}): --concurrency 4 ${sec(at4)}, --concurrency 1 ${sec(at1)}, critical path ${sec(critical)}; ratio ${median(rows.map((r) => r.at4 / r.critical)).toFixed(2)}× (target ≤ 1.1×), speed-up ${median(rows.map((r) => r.at1 / r.at4)).toFixed(2)}×`,
);

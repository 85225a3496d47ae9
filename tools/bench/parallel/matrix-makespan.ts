// Benchmark: the makespan of the scale-out flow (examples/ci/allium-loop-slices.yml) with its slice jobs run 4 at
// once against 1 at a time and against the plan's critical path, on a generated spec with a known slice DAG and
// replay agents of fixed latency. Every job runs in its own clone, through the workflow's own step scripts
// (packages/cli/src/e2e/matrix-flow.test-helpers.ts).
// Run: node --conditions=development --import tsx tools/bench/parallel/matrix-makespan.ts [--reps 3] [--latency-ms 3000] [--width 4]
import { createHash } from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  makeOrigin,
  runMatrixFlow,
  type JobRun,
} from '../../../packages/cli/src/e2e/matrix-flow.test-helpers.js';
import { makespanArgs } from './makespan-args.js';

const ARGS = makespanArgs();
const REPS = ARGS.reps;
const LATENCY = ARGS.latencyMs;
const NAMES = ARGS.names;
const WIDTH = NAMES.length;

/**
 * WIDTH independent lifecycles (wave 1: `Thing` with one rule each), then `Tally`, created by a rule that reads
 * the first of them (wave 2, after it), then the integration pass: a known DAG of depth 2 plus integration.
 */
function spec(): string {
  const things = NAMES.map(
    (name) => `entity ${name} {
    status: off | on
}

rule Start${name} {
    when: Start${name}(${name.toLowerCase()})
    requires: ${name.toLowerCase()}.status = off
    ensures: ${name.toLowerCase()}.status = on
}
`,
  );
  const first = NAMES[0]!.toLowerCase();
  return `-- allium: 3

${things.join('\n')}
entity Tally {
    count: Integer
}

rule CountStarted {
    when: CountStarted(${first})
    requires: ${first}.status = on
    ensures: Tally.created(count: 1)
}
`;
}

const fn = (key: string) => key.replace(/[^A-Za-z0-9]/g, '_');

/** Propagate (a failing test), implement (the code), weed (clean): each after LATENCY ms. */
function sliceSteps(key: string): unknown[] {
  const test = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ${fn(key)} } from '../src/${key}.js';
test('${key} works', () => assert.equal(${fn(key)}(), 'done'));
`;
  return [
    {
      phase: 'propagate',
      delayMs: LATENCY,
      write: { [`test/${key}.test.js`]: test },
      result: {
        phase: 'propagate',
        obligations: { total: 1, covered: 1, uncovered: 0 },
        uncovered_obligations: [],
        generated_tests: [
          {
            path: `test/${key}.test.js`,
            hash: `sha256:${createHash('sha256').update(test, 'utf8').digest('hex')}`,
          },
        ],
        summary: key,
      },
      loop: { covers: [{ path: `test/${key}.test.js`, obligations: [key] }] },
    },
    {
      phase: 'implement',
      delayMs: LATENCY,
      write: { [`src/${key}.js`]: `export function ${fn(key)}() { return 'done'; }\n` },
      result: { phase: 'implement', files_changed: [`src/${key}.js`], contested_tests: [], summary: key },
    },
    {
      phase: 'weed',
      delayMs: LATENCY,
      result: { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' },
    },
  ];
}

const INTEGRATION_TEST = `import assert from 'node:assert/strict';
import { test } from 'node:test';
test('together', () => assert.ok(true));
`;

function integrationSteps(): unknown[] {
  return [
    {
      phase: 'propagate',
      delayMs: LATENCY,
      write: { 'test/integration.test.js': INTEGRATION_TEST },
      result: {
        phase: 'propagate',
        obligations: { total: 1, covered: 1, uncovered: 0 },
        uncovered_obligations: [],
        generated_tests: [
          {
            path: 'test/integration.test.js',
            hash: `sha256:${createHash('sha256').update(INTEGRATION_TEST, 'utf8').digest('hex')}`,
          },
        ],
        summary: 'together',
      },
      loop: { covers: [{ path: 'test/integration.test.js', obligations: ['CountStarted'] }] },
    },
    {
      phase: 'weed',
      delayMs: LATENCY,
      result: { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' },
    },
  ];
}

interface Measure {
  readonly makespanMs: number;
  /** Σ over waves of the slowest slice job, plus the merge jobs and the integration job, of this run. */
  readonly criticalMs: number;
  readonly sliceJobs: readonly JobRun[];
}

const span = (jobs: readonly JobRun[]) =>
  Math.max(...jobs.map((j) => j.endMs)) - Math.min(...jobs.map((j) => j.startMs));

async function once(maxParallel: number): Promise<Measure> {
  const work = await mkdtemp(join(tmpdir(), 'allium-loop-bench-parallel-'));
  try {
    const origin = await makeOrigin(work, {
      'package.json': '{ "type": "module", "private": true }\n',
      'allium-loop.yaml': 'testCommand: node --test\n',
      'specs/things.allium': spec(),
      'src/.keep': '',
    });
    const scripts = join(work, 'scripts');
    await mkdir(scripts);
    const flow = await runMatrixFlow({
      work,
      origin,
      goal: 'start the things and count them',
      maxParallel,
      scripts: async (keys) => {
        const paths: Record<string, string> = {};
        for (const key of keys) {
          paths[key] = join(scripts, `${key}.json`);
          const steps = key === 'integration' ? integrationSteps() : sliceSteps(key);
          await writeFile(paths[key], JSON.stringify({ version: 1, steps }));
        }
        return paths;
      },
    });
    const failed = [...flow.jobs].find((job) => job.code !== 0);
    if (failed !== undefined) throw new Error(`job ${failed.job} failed:\n${failed.out}`);
    const waves = [1, 2].map((wave) =>
      (JSON.parse(flow.outputs[`wave${String(wave)}`]!) as { include: { slice: string }[] }).include.map(
        (e) => e.slice,
      ),
    );
    if (waves[0]!.length !== WIDTH || waves[1]!.length !== 1)
      throw new Error(`unexpected plan: ${JSON.stringify(waves)}`);
    const job = (name: string) => flow.jobs.find((j) => j.job === name)!;
    const sliceJobs = flow.jobs.filter((j) => j.job.startsWith('slice '));
    const flowJobs = flow.jobs.filter((j) => j.job !== 'plan' && j.job !== 'roll-up');
    const criticalMs =
      waves
        .map((ids) => Math.max(...ids.map((id) => job(`slice ${id}`).endMs - job(`slice ${id}`).startMs)))
        .reduce((a, b) => a + b, 0) +
      ['merge1', 'merge2', 'slice integration']
        .map((name) => job(name).endMs - job(name).startMs)
        .reduce((a, b) => a + b, 0);
    return { makespanMs: span(flowJobs), criticalMs, sliceJobs };
  } finally {
    if (!ARGS.keep) await rm(work, { recursive: true, force: true });
  }
}

const median = (xs: readonly number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

console.log(
  `matrix makespan: ${String(WIDTH)} slices in wave 1, 1 in wave 2, then integration; agent latency ${String(LATENCY)} ms per call; ${String(REPS)} rep(s); ${String(availableParallelism())} cores, load ${loadavg()[0]!.toFixed(2)}`,
);
const rows: { parallel: Measure; serial: Measure }[] = [];
for (let rep = 1; rep <= REPS; rep += 1) {
  // Alternated in one repetition, so both see the same machine load.
  const parallel = await once(WIDTH);
  const serial = await once(1);
  rows.push({ parallel, serial });
  console.log(
    `rep ${String(rep)}: ${String(WIDTH)} at once ${s(parallel.makespanMs)} (critical path ${s(parallel.criticalMs)}, ratio ${(parallel.makespanMs / parallel.criticalMs).toFixed(3)}) · 1 at a time ${s(serial.makespanMs)} (critical path ${s(serial.criticalMs)}) · speed-up ${(serial.makespanMs / parallel.makespanMs).toFixed(2)}×`,
  );
}
const mp = median(rows.map((r) => r.parallel.makespanMs));
const cp = median(rows.map((r) => r.parallel.criticalMs));
const ms = median(rows.map((r) => r.serial.makespanMs));
const cs = median(rows.map((r) => r.serial.criticalMs));
console.log(
  `median: ${String(WIDTH)} at once ${s(mp)}; its critical path ${s(cp)} (makespan / critical path ${median(rows.map((r) => r.parallel.makespanMs / r.parallel.criticalMs)).toFixed(3)}); ` +
    `1 at a time ${s(ms)}; critical path with uncontended job times ${s(cs)} (${String(WIDTH)} at once / that ${median(rows.map((r) => r.parallel.makespanMs / r.serial.criticalMs)).toFixed(3)}); speed-up ${median(rows.map((r) => r.serial.makespanMs / r.parallel.makespanMs)).toFixed(2)}×`,
);

// Counts the processes one tick of the real loop starts: runs the BUILT CLI on the loop bench's project (the same
// fixture as loop-overhead.ts) under `strace -f -e trace=execve`, and sorts every program the engine started by
// what it is: git (by subcommand), the agent and test wrappers, `/bin/sh` for the test command, anything else.
// Two runs of different length (TICKS and 2×TICKS ticks) separate the per-tick count from the fixed cost of a run
// (start-up, set-up, the final report): per tick = (long − short) / TICKS. Also times one bare git spawn and one
// working-tree hash through the orchestrator's own git helpers, to price what a git process costs under the
// current load.
//
// Usage: node --conditions=development --import tsx tools/bench/loop/git-per-tick.ts
//          [--cli packages/cli/dist/main.js] [--ticks 4] [--keep]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gitHead, gitWorkingTree } from '@allium-loop/orchestrator';
import { GOAL, makeFixture, makeProject } from './bench-project.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const { values: flags } = parseArgs({
  options: {
    cli: { type: 'string', default: join(ROOT, 'packages/cli/dist/main.js') },
    ticks: { type: 'string', default: '4' },
    keep: { type: 'boolean', default: false },
  },
});
const CLI = resolve(flags.cli);
const TICKS = Number(flags.ticks);
const RUNS = 9;

/** Program starts of one CLI run, by kind (`git rev-parse`, `agent`, `test`, `sh`, …). */
type Counts = Map<string, number>;

/** The kind of one `execve` strace logged: git by subcommand, the bench wrappers by role, else the program. */
function kindOf(program: string, args: readonly string[]): string {
  const name = basename(program);
  if (name === 'git') {
    const sub = args.slice(1).find((a, i, all) => !a.startsWith('-') && all[i - 1] !== '-c');
    return `git ${sub ?? '?'}`;
  }
  if (name === 'timed-node.sh') return 'agent (wrapper)';
  if (name === 'timed-test.sh') return 'test (wrapper)';
  return name;
}

/** Parses `strace -f -e trace=execve` output: successful execs only, skipping the CLI's own node start. */
function countExecs(log: string): Counts {
  const counts: Counts = new Map();
  const execs = readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line.includes('execve(') && !/= -1 /.test(line));
  for (const line of execs.slice(1)) {
    const match = /execve\("([^"]+)", \[(.*?)\]/.exec(line);
    if (match === null) continue;
    const args = [...match[2]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
    const kind = kindOf(match[1]!, args);
    counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  return counts;
}

/** Runs the CLI for `ticks` ticks under strace; throws unless it stopped on max_ticks. */
function tracedRun(parent: string, ticks: number): Counts {
  const fixture = makeFixture(mkdtempSync(join(parent, `fixture-${String(ticks)}-`)), ticks);
  const dir = makeProject(parent, `engine-${String(ticks)}`, fixture);
  const log = join(parent, `strace-${String(ticks)}.log`);
  const run = spawnSync(
    'strace',
    [
      '-f',
      '-qq',
      '-e',
      'trace=execve',
      '-o',
      log,
      process.execPath,
      CLI,
      'run',
      GOAL,
      '--max-ticks',
      String(ticks),
    ],
    { cwd: dir, env: { ...process.env, FORCE_COLOR: '0', CI: 'true' }, encoding: 'utf8' },
  );
  if (run.error !== undefined)
    throw new Error(`strace could not start (is it installed?): ${run.error.message}`);
  if (run.status !== 3)
    throw new Error(
      `the run did not stop on max_ticks (exit ${String(run.status)}):\n${run.stdout}${run.stderr}`,
    );
  return countExecs(log);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

/** Prices one git spawn and one working-tree hash on a copy of the bench project. */
async function priceGit(parent: string): Promise<{ spawn: number; hash: number }> {
  const dir = makeProject(parent, 'priced', makeFixture(mkdtempSync(join(parent, 'priced-fixture-')), 1));
  const single: number[] = [];
  const tree: number[] = [];
  for (let run = 0; run < RUNS; run += 1) {
    writeFileSync(join(dir, 'src', 'note.js'), `export const attempt = ${String(run)};\n`);
    single.push(await time(() => gitHead(dir)));
    tree.push(await time(() => gitWorkingTree(dir)));
  }
  return { spawn: median(single), hash: median(tree) };
}

async function main(): Promise<void> {
  execFileSync('strace', ['-V']);
  const parent = mkdtempSync(join(tmpdir(), 'bench-git-tick-'));
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  console.log(`CLI ${CLI}; runs of ${String(TICKS)} and ${String(2 * TICKS)} ticks; load average ${load()}`);
  try {
    const short = tracedRun(parent, TICKS);
    const long = tracedRun(parent, 2 * TICKS);
    const kinds = [...new Set([...short.keys(), ...long.keys()])].sort();
    let gitPerTick = 0;
    let allPerTick = 0;
    let gitFixed = 0;
    console.log('kind | per tick | fixed per run');
    for (const kind of kinds) {
      const a = short.get(kind) ?? 0;
      const b = long.get(kind) ?? 0;
      const perTick = (b - a) / TICKS;
      const fixed = a - perTick * TICKS;
      allPerTick += perTick;
      if (kind.startsWith('git ')) {
        gitPerTick += perTick;
        gitFixed += fixed;
      }
      console.log(`${kind} | ${perTick.toFixed(2)} | ${fixed.toFixed(2)}`);
    }
    console.log(
      `processes per tick: ${allPerTick.toFixed(2)}, of which git ${gitPerTick.toFixed(2)}; git processes per run outside the ticks: ${gitFixed.toFixed(2)}`,
    );
    const price = await priceGit(parent);
    console.log(
      `one git spawn (rev-parse HEAD) median ${price.spawn.toFixed(1)} ms; one working-tree hash median ${price.hash.toFixed(1)} ms (${String(RUNS)} runs); load average ${load()}`,
    );
  } finally {
    if (flags.keep) console.log(`kept ${parent}`);
    else rmSync(parent, { recursive: true, force: true });
  }
}

await main();

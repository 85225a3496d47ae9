// Engine overhead per tick of `allium-loop run` (the BUILT CLI, packages/cli/dist/main.js), against a plain bash
// `while` loop that runs the same fake agent and the same test command the same number of times per tick.
//
// The fake agent is the replay agent (packages/agents/bin/replay-agent.mjs) playing a generated script instantly;
// the test command is a tiny Node script printing a TAP summary of one passing test. Both are started through
// bash wrappers that log their own start and end (ns) to a file, so "subprocess time" is measured by the
// subprocesses themselves, for the engine and the shell loop alike. The goal is the drift goal (entry: weed);
// every tick weed reports one divergence and implement makes a distinct small edit, so the run goes to
// --max-ticks (stall caps are raised in allium-loop.yaml; repeated_action cannot fire as every edit differs).
//
// Usage: node --conditions=development --import tsx tools/bench/loop/loop-overhead.ts
//          [--cli packages/cli/dist/main.js] [--ticks 10] [--reps 5] [--keep]
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  GOAL,
  SLUG,
  cpuReporter,
  makeFixture,
  makeProject,
  readCpuMs,
  readSpans,
  type Span,
} from './bench-project.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const { values: flags } = parseArgs({
  options: {
    cli: { type: 'string', default: join(ROOT, 'packages/cli/dist/main.js') },
    ticks: { type: 'string', default: '10' },
    reps: { type: 'string', default: '5' },
    keep: { type: 'boolean', default: false },
  },
});
const CLI = resolve(flags.cli);
const TICKS = Number(flags.ticks);
const REPS = Number(flags.reps);
const REPLAY_AGENT = join(dirname(dirname(dirname(CLI))), 'agents/bin/replay-agent.mjs');

/** What one driven run (engine or shell loop) took. */
interface Measured {
  readonly wallMs: number;
  readonly spans: readonly Span[];
  /** The engine's own CPU time (its node process, not its children); 0 for the shell loop. */
  readonly cpuMs: number;
}

function timed(
  command: string,
  args: readonly string[],
  cwd: string,
): Promise<{ ms: number; code: number | null; out: string }> {
  return new Promise((done, fail) => {
    const started = performance.now();
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, FORCE_COLOR: '0', CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ ms: performance.now() - started, code, out }));
  });
}

/** Runs the built CLI for TICKS ticks; checks it stopped on max_ticks after exactly TICKS verdicts. */
async function runEngine(parent: string, rep: number): Promise<Measured> {
  const fixture = makeFixture(mkdtempSync(join(parent, `engine-fixture-${String(rep)}-`)), TICKS);
  const dir = makeProject(parent, `engine-${String(rep)}`, fixture);
  const cpuFile = join(parent, `engine-cpu-${String(rep)}.json`);
  const reporter = cpuReporter(mkdtempSync(join(parent, 'cpu-')), cpuFile);
  const run = await timed(
    process.execPath,
    ['--require', reporter, CLI, 'run', GOAL, '--max-ticks', String(TICKS)],
    dir,
  );
  const ledger = JSON.parse(readFileSync(join(dir, '.allium-loop', `${SLUG}.json`), 'utf8')) as {
    terminal?: { state?: string };
    verdicts?: unknown[];
    spent?: { agentCalls?: number };
  };
  if (run.code !== 3 || ledger.terminal?.state !== 'max_ticks' || ledger.verdicts?.length !== TICKS)
    throw new Error(
      `engine run did not stop on max_ticks after ${String(TICKS)} ticks (exit ${String(run.code)}):\n${run.out}`,
    );
  const spans = readSpans(fixture.log);
  const agentSpans = spans.filter((s) => s.kind === 'agent').length;
  if (agentSpans !== ledger.spent?.agentCalls)
    throw new Error(
      `wrapper saw ${String(agentSpans)} agent calls, ledger ${String(ledger.spent?.agentCalls)}`,
    );
  return { wallMs: run.ms, spans, cpuMs: readCpuMs(cpuFile) };
}

/** The engine's calls per tick: a tick starts with its test run (measure); the last tick may stop early. */
interface TickShape {
  readonly calls: readonly string[];
  readonly lastTickCalls: number;
}

/** The bash `while` loop doing what the engine's subprocesses did: per tick, the same calls in the same order. */
async function runShell(parent: string, rep: number, shape: TickShape): Promise<Measured> {
  const fixture = makeFixture(mkdtempSync(join(parent, `shell-fixture-${String(rep)}-`)), TICKS);
  const dir = makeProject(parent, `shell-${String(rep)}`, fixture);
  mkdirSync(join(dir, '.bench'), { recursive: true });
  const body = shape.calls
    .map((step, k) => {
      const line =
        step === 'test'
          ? `${fixture.test} > .bench/test-$i.out 2>&1`
          : `${fixture.agent} ${REPLAY_AGENT} --script ${fixture.script} --state .bench/replay-state.json --phase ${step} --result-file .bench/$i-${String(k)}-${step}.json < /dev/null > .bench/agent-$i-${String(k)}.out 2>&1`;
      return k < shape.lastTickCalls ? `  ${line}` : `  if [ $i -lt ${String(TICKS - 1)} ]; then ${line}; fi`;
    })
    .join('\n');
  const loop = `i=0\nwhile [ $i -lt ${String(TICKS)} ]; do\n${body}\n  i=$((i+1))\ndone\n`;
  writeFileSync(join(dir, '.bench', 'loop.sh'), loop);
  const run = await timed('/bin/bash', [join(dir, '.bench', 'loop.sh')], dir);
  if (run.code !== 0) throw new Error(`shell loop failed (exit ${String(run.code)}):\n${run.out}`);
  return { wallMs: run.ms, spans: readSpans(fixture.log), cpuMs: 0 };
}

/** Splits the engine's spans into ticks, each starting at a test run. */
function ticksOf(spans: readonly Span[]): Span[][] {
  const ticks: Span[][] = [];
  for (const span of spans) {
    if (span.kind === 'test' || ticks.length === 0) ticks.push([]);
    ticks.at(-1)!.push(span);
  }
  return ticks;
}

const callName = (s: Span): string => (s.kind === 'test' ? 'test' : s.phase);

/** The engine's call sequence per tick; every tick but the last must make the same calls, the last a prefix. */
function shapeOf(spans: readonly Span[]): TickShape {
  const ticks = ticksOf(spans).map((tick) => tick.map(callName));
  const first = ticks[0]!;
  const last = ticks.at(-1)!;
  const uniform =
    ticks.length === TICKS &&
    ticks.slice(0, -1).every((tick) => tick.join(',') === first.join(',')) &&
    first.slice(0, last.length).join(',') === last.join(',');
  if (!uniform) throw new Error(`ticks differ in their calls: ${ticks.map((t) => t.join(',')).join(' | ')}`);
  return { calls: first, lastTickCalls: last.length };
}

function subprocessMs(spans: readonly Span[]): number {
  return spans.reduce((sum, s) => sum + (s.end - s.start), 0);
}

/** Steady-state overhead per tick: the gap from one tick's first call to the next's, minus its subprocess time. */
function steadyTickOverheads(spans: readonly Span[]): number[] {
  const ticks = ticksOf(spans);
  const gaps: number[] = [];
  for (let t = 1; t + 1 < ticks.length; t += 1)
    gaps.push(ticks[t + 1]![0]!.start - ticks[t]![0]!.start - subprocessMs(ticks[t]!));
  return gaps;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const ms = (value: number): string => `${value.toFixed(1)} ms`;
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

async function main(): Promise<void> {
  const parent = mkdtempSync(join(tmpdir(), 'bench-loop-'));
  console.log(
    `CLI ${CLI}; ${String(TICKS)} ticks × ${String(REPS)} repetitions; load average at start ${load()}`,
  );
  const rows: {
    overhead: number;
    steady: number;
    startup: number;
    engine: number;
    shell: number;
    ratio: number;
    sub: number;
    shellSub: number;
    cpu: number;
  }[] = [];
  let shape: TickShape = { calls: [], lastTickCalls: 0 };
  try {
    for (let rep = 0; rep < REPS + 1; rep += 1) {
      const engine = await runEngine(parent, rep);
      shape = shapeOf(engine.spans);
      const shell = await runShell(parent, rep, shape);
      if (rep === 0) continue; // warm-up: file cache, git, node compile cache
      const sub = subprocessMs(engine.spans);
      const firstSpan = engine.spans[0]!.start;
      const lastSpan = engine.spans.at(-1)!.end;
      const row = {
        engine: engine.wallMs,
        shell: shell.wallMs,
        ratio: engine.wallMs / shell.wallMs,
        sub,
        shellSub: subprocessMs(shell.spans),
        overhead: (engine.wallMs - sub) / TICKS,
        steady: median(steadyTickOverheads(engine.spans)),
        // Engine time outside the ticks' span: node start-up, module loading, setup, the final report and exit.
        startup: engine.wallMs - (lastSpan - firstSpan),
        cpu: engine.cpuMs / TICKS,
      };
      rows.push(row);
      console.log(
        `rep ${String(rep)}: engine ${ms(row.engine)} (subprocesses ${ms(row.sub)}), shell ${ms(row.shell)} (subprocesses ${ms(row.shellSub)}), ratio ${row.ratio.toFixed(2)}×, overhead/tick ${ms(row.overhead)}, steady-state overhead/tick ${ms(row.steady)}, outside ticks ${ms(row.startup)}, engine CPU/tick ${ms(row.cpu)}`,
      );
    }
  } finally {
    if (!flags.keep) rmSync(parent, { recursive: true, force: true });
    else console.log(`kept ${parent}`);
  }
  const pick = (key: keyof (typeof rows)[number]) => median(rows.map((r) => r[key]));
  console.log(
    `calls per tick: ${shape.calls.join(', ')} (the last tick stops after ${String(shape.lastTickCalls)})`,
  );
  console.log(
    `median engine wall ${ms(pick('engine'))}, shell loop wall ${ms(pick('shell'))}, ratio ${pick('ratio').toFixed(2)}× (aim < 1.3×)`,
  );
  console.log(
    `median engine overhead per tick ${ms(pick('overhead'))} (aim < 50 ms), of which steady-state per tick ${ms(pick('steady'))}; outside the ticks (start-up, set-up, exit) ${ms(pick('startup'))} per run`,
  );
  console.log(
    `median subprocess time per tick: engine ${ms(pick('sub') / TICKS)}, shell loop ${ms(pick('shellSub') / TICKS)}`,
  );
  console.log(
    `median engine CPU time per tick (its own node process, start-up included; children not): ${ms(pick('cpu'))}`,
  );
  console.log(`load average at end ${load()}`);
}

await main();

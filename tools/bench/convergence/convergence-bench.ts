// The convergence benchmark: seeded scenarios (tools/bench/convergence/scenarios.ts) run end to end through the real
// agent path — `allium-loop run` (from source) drives the real, pinned `claude` CLI (or `codex`), which talks to the
// scripted model server on 127.0.0.1 — and a table of outcomes: terminal state, measured ticks, agent calls, cost,
// cheats caught, and whether the final tree is green when its tests are re-run independently.
//
// Usage: node --conditions=development --import tsx tools/bench/convergence/convergence-bench.ts
//          [--agent claude|codex] [--only <name>[,<name>]] [--json results/convergence.json]
// With a real model instead of the scripted one, see docs/metrics.md ("Running it with a real model").
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { startScriptedModel, type RealCliName } from '@allium-loop/scripted-model';
import { DEMO_GOAL, prepareDemo } from '../../../packages/cli/src/commands/demo.js';
import { runCli } from '../../../packages/cli/src/e2e/e2e.test-helpers.js';
import { collectTicks } from '../../../packages/cli/src/render/report-ticks.js';
import { isRateLimitWait } from '../../../packages/cli/src/render/report-journal.js';
import {
  REAL_CLIS,
  agentConfigFor,
  configureProject,
  envFor,
  onlySlug,
} from '../../../packages/cli/src/real-agents/real-agents.test-helpers.js';
import { createFileLedgerStore, createRedactor } from '@allium-loop/ledger';
import { scenarios, type Outcome } from './scenarios.js';

const exec = promisify(execFile);
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const { values: flags } = parseArgs({
  options: {
    agent: { type: 'string', default: 'claude' },
    'real-model': { type: 'boolean', default: false },
    reps: { type: 'string', default: '1' },
    only: { type: 'string' },
    json: { type: 'string', default: join(ROOT, 'tools/bench/convergence/results/convergence.json') },
  },
});

interface Row extends Outcome {
  readonly scenario: string;
  readonly expected: string;
  readonly met: boolean;
  readonly ticks: number;
  readonly calls: number;
  readonly usd: number | null;
  readonly rateLimitWaits: number;
  readonly faultsPlayed: number;
  readonly seconds: number;
  readonly detail: string;
}

/** Re-runs the project's tests outside the engine, and compares the generated tests with the ledger's hashes. */
async function independentlyGreen(dir: string, protectedTests: readonly { path: string; sha256: string }[]): Promise<boolean> {
  const tests = await exec('node', ['--test'], { cwd: dir }).then(
    () => true,
    () => false,
  );
  if (!tests) return false;
  const { createHash } = await import('node:crypto');
  for (const t of protectedTests) {
    const text = await readFile(join(dir, t.path)).catch(() => undefined);
    if (text === undefined || createHash('sha256').update(text).digest('hex') !== t.sha256) return false;
  }
  return true;
}

async function runScenario(name: string): Promise<Row> {
  const cliName = flags.agent as RealCliName;
  const cli = REAL_CLIS.find((c) => c.name === cliName);
  if (cli === undefined || 'skipReason' in cli)
    throw new Error(`the real ${cliName} CLI is not available: ${cli !== undefined && 'skipReason' in cli ? cli.skipReason : 'unknown agent'}`);
  const counterDir = await mkdtemp(join(tmpdir(), 'allium-bench-flaky-'));
  const scenario = scenarios(join(counterDir, 'count')).find((s) => s.name === name)!;
  const server = await startScriptedModel({ script: scenario.script() });
  const dir = await prepareDemo();
  const started = Date.now();
  try {
    // A real model: the CLI's own endpoint and the key from this environment, never the scripted server.
    const real = flags['real-model'];
    const agent = real ? { kind: cliName, binary: cli.path } : agentConfigFor(cli);
    await configureProject(dir, agent, { agentTimeoutSeconds: 600, ...scenario.caps });
    const env = real ? realModelEnv(cliName) : await envFor(cliName, server);
    const run = await runCli(['run', DEMO_GOAL], dir, env);
    const slug = await onlySlug(dir);
    const store = createFileLedgerStore({ dir: join(dir, '.allium-loop'), redactor: createRedactor({}) });
    const loaded = await store.load(slug);
    if (!loaded.ok) throw new Error(`${name}: the ledger did not load`);
    const ledger = loaded.value.ledger;
    const { events } = await store.readJournal(slug);
    const outcome: Outcome = {
      terminal: ledger.terminal?.state ?? 'running',
      cheatsCaught: events.filter((e) => e.type === 'violation').length,
      independentlyGreen: await independentlyGreen(dir, ledger.protectedTests),
    };
    return {
      scenario: name,
      expected: scenario.expected,
      met: scenario.meets(outcome),
      ...outcome,
      ticks: collectTicks(ledger, events).length,
      calls: ledger.spent.agentCalls,
      usd: ledger.spent.usd,
      rateLimitWaits: events.filter(isRateLimitWait).length,
      faultsPlayed: server.requests.filter((r) => r.fault !== undefined).length,
      seconds: Math.round((Date.now() - started) / 1000),
      detail: ledger.terminal?.detail ?? `exit ${String(run.code)}: ${run.stderr.slice(-300)}`,
    };
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
    await rm(counterDir, { recursive: true, force: true });
  }
}

/** The environment for a real model: PATH, HOME and the provider key of this shell (nothing else). */
function realModelEnv(cli: RealCliName): Record<string, string> {
  const keyName = cli === 'claude' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
  const key = process.env[keyName];
  if (key === undefined || key === '') throw new Error(`--real-model needs ${keyName} in the environment`);
  return { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: process.env['HOME'] ?? tmpdir(), [keyName]: key };
}

function table(rows: readonly Row[]): string {
  const lines = [
    '| scenario | expected | outcome | met | measured ticks | agent calls | cost | cheats caught | re-run green | time |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.expected} | ${r.terminal} — ${r.detail.replace(/\|/g, '/')} | ${r.met ? 'yes' : '**NO**'} | ${String(r.ticks)} | ${String(r.calls)} | ${r.usd === null ? 'unknown' : `$${r.usd.toFixed(4)}`} | ${String(r.cheatsCaught)} | ${r.independentlyGreen ? 'yes' : 'no'} | ${String(r.seconds)} s |`,
    ),
  ];
  const falseConverged = rows.filter((r) => r.terminal === 'converged' && !r.independentlyGreen).length;
  return `${lines.join('\n')}\n\nfalse "converged": ${String(falseConverged)} · expectations met: ${String(rows.filter((r) => r.met).length)}/${String(rows.length)}\n`;
}

// With a real model only the honest scenario means anything: the others script the model's misbehaviour.
const names = flags['real-model']
  ? Array.from({ length: Number(flags.reps) }, () => 'honest')
  : (flags.only?.split(',') ?? scenarios('').map((s) => s.name));
const rows: Row[] = [];
for (const name of names) {
  process.stderr.write(`scenario ${name} …\n`);
  const row = await runScenario(name);
  process.stderr.write(`  ${row.terminal} (${row.met ? 'as expected' : 'NOT as expected'}) in ${String(row.seconds)} s\n`);
  rows.push(row);
}
await mkdir(dirname(flags.json), { recursive: true });
await writeFile(flags.json, `${JSON.stringify({ agent: flags.agent, at: new Date().toISOString(), rows }, null, 2)}\n`);
process.stdout.write(table(rows));
process.exitCode = rows.every((r) => r.met) ? 0 : 1;

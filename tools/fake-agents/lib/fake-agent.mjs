// Shared engine of the fake agent CLIs: reads the scenario named by FAKE_AGENT_SCENARIO, records how it was
// called, applies the scenario's file edits, then prints what the real CLI would (via the `shapes` of each CLI).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Behaviours a scenario can ask for. */
export const BEHAVIOURS = [
  'success',
  'fail',
  'hang',
  'over-budget',
  'max-turns',
  'is-error-success',
  'rate-limited',
  'truncated',
  'grandchild-ignores-term',
  'huge-output',
];

function readScenario() {
  const file = process.env.FAKE_AGENT_SCENARIO;
  if (file === undefined || file === '') return { behaviour: 'success' };
  const scenario = JSON.parse(readFileSync(file, 'utf8'));
  if (!BEHAVIOURS.includes(scenario.behaviour ?? 'success'))
    throw new Error(`fake agent: unknown behaviour ${scenario.behaviour}`);
  return { behaviour: 'success', ...scenario };
}

function readStdin() {
  try {
    return readFileSync(0, 'utf8');
  } catch {
    return '';
  }
}

function applyEdits(scenario) {
  for (const [path, content] of Object.entries(scenario.write ?? {})) {
    const target = resolve(process.cwd(), path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
  for (const path of scenario.delete ?? []) rmSync(resolve(process.cwd(), path), { force: true });
}

/**
 * Writes `text` to stdout and waits until it has reached the OS, so a `process.exit` right after cannot cut it.
 * (`write()` returning true only means the text was queued: on a full pipe, a short last line stays in Node's
 * queue and `process.exit` drops it. That, not the engine, lost the final report of the 50 MB test under load.)
 */
export function write(text) {
  return new Promise((done) => process.stdout.write(text, () => done()));
}

function hangForever() {
  setInterval(() => {}, 1_000);
  return new Promise(() => {});
}

function spawnStubbornGrandchild(pidFile) {
  const code = "process.on('SIGTERM',()=>{});setInterval(()=>{},1000)";
  const child = spawn(process.execPath, ['-e', code], { stdio: 'inherit' });
  if (pidFile !== undefined)
    writeFileSync(pidFile, JSON.stringify({ pid: process.pid, grandchild: child.pid }));
}

/** Prints about `bytes` of output through `emitFiller(i)` (each call returns one chunk). */
async function emitHuge(bytes, emitFiller) {
  let written = 0;
  let batch = '';
  for (let i = 0; written < bytes; i += 1) {
    const chunk = emitFiller(i);
    written += Buffer.byteLength(chunk);
    batch += chunk;
    if (batch.length >= 256 * 1024) {
      await write(batch);
      batch = '';
    }
  }
  await write(batch);
}

/**
 * Runs a fake CLI. `shapes` prints each CLI's documented output: `start(ctx)`, `progress(ctx, i)` (one filler
 * chunk), `final(ctx)` (the final report, or '' when the CLI has none), `failure(ctx)`, `truncated(ctx)`, and
 * optional `exitCodeFor(behaviour)`; `promptFrom(argv, stdin)` says where the prompt arrived.
 */
export async function runFakeAgent(shapes) {
  const scenario = readScenario();
  const argv = process.argv.slice(2);
  const stdin = readStdin();
  const ctx = { scenario, argv, stdin, behaviour: scenario.behaviour };
  if (scenario.recordFile !== undefined) {
    const env = Object.keys(process.env).filter((name) => !['PWD', 'SHLVL', '_'].includes(name));
    const record = { argv, stdin, prompt: shapes.promptFrom(argv, stdin), env, cwd: process.cwd() };
    writeFileSync(scenario.recordFile, JSON.stringify(record));
  }
  if (scenario.echoEnv !== undefined)
    process.stderr.write(`debug: key ${process.env[scenario.echoEnv] ?? ''}\n`);
  if (scenario.pidFile !== undefined && ctx.behaviour !== 'grandchild-ignores-term')
    writeFileSync(scenario.pidFile, JSON.stringify({ pid: process.pid }));
  applyEdits(scenario);
  await write(shapes.start(ctx));
  await play(ctx, shapes);
}

async function play(ctx, shapes) {
  const { behaviour, scenario } = ctx;
  if (behaviour === 'hang') return hangForever();
  if (behaviour === 'grandchild-ignores-term') {
    spawnStubbornGrandchild(scenario.pidFile);
    return hangForever();
  }
  if (behaviour === 'fail') {
    process.stderr.write(shapes.failure(ctx));
    process.exit(scenario.exitCode ?? 1);
  }
  if (behaviour === 'truncated') {
    await write(shapes.truncated(ctx));
    process.exit(scenario.exitCode ?? 0);
  }
  if (behaviour === 'huge-output')
    await emitHuge(scenario.outputBytes ?? 50 * 1024 * 1024, (i) => shapes.progress(ctx, i));
  else await write(shapes.progress(ctx, 0));
  await write(shapes.final(ctx));
  process.exit(scenario.exitCode ?? shapes.exitCodeFor?.(behaviour) ?? 0);
}

/** The value after `flag` in argv, if any. */
export function flagValue(argv, flag) {
  const index = argv.indexOf(flag);
  return index === -1 ? undefined : argv[index + 1];
}

/** A filler line of about 1 KiB. */
export function filler(i) {
  return `working on step ${i} ${'.'.repeat(1000)}`;
}

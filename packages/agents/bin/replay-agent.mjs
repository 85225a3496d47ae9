#!/usr/bin/env node
// The replay agent: plays one step of a replay script as a real child process, so replayed calls go through the
// same process runner as a real agent. Run by the `replay` adapter (src/replay-agent.ts), which has already
// validated the script; paths are checked again here because this is where files are written.
// Usage: replay-agent.mjs --script S --state STATE --phase P --result-file R   (cwd = the agent's working dir)
import {
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
  existsSync,
} from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    script: { type: 'string' },
    state: { type: 'string' },
    phase: { type: 'string' },
    'result-file': { type: 'string' },
    'call-key': { type: 'string' },
  },
});

const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

function fail(message, code = 3) {
  say({ type: 'replay.error', message });
  process.stderr.write(`replay: ${message}\n`);
  process.exit(code);
}

function readJson(path, fallback) {
  if (!existsSync(path)) return fallback;
  return JSON.parse(readFileSync(path, 'utf8'));
}

function writeAtomically(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, text);
  renameSync(temp, path);
}

/** Resolves `path` inside `root`, refusing anything that escapes it (also through symlinked folders). */
function inside(root, path) {
  const target = resolve(root, path);
  if (isAbsolute(path) || relative(root, target).startsWith('..'))
    fail(`path escapes the working directory: ${path}`);
  let existing = dirname(target);
  while (!existsSync(existing)) existing = dirname(existing);
  if (relative(root, realpathSync(existing)).startsWith('..'))
    fail(`path escapes the working directory: ${path}`);
  return target;
}

function pickStep(script, phase, state, callKey) {
  const steps = script.steps.filter((step) => step.phase === phase);
  // A call the engine re-runs after an interruption carries the same key: replay the same step again.
  const replayed = callKey === undefined ? undefined : state.keys?.[callKey];
  if (replayed !== undefined && replayed.phase === phase && steps[replayed.call - 1] !== undefined)
    return { step: steps[replayed.call - 1], call: replayed.call, again: true };
  const count = state.calls[phase] ?? 0;
  if (steps.length === 0) fail(`the script has no step for phase ${phase}`);
  const step = count < steps.length ? steps[count] : steps.at(-1).repeat === true ? steps.at(-1) : undefined;
  if (step === undefined)
    fail(`no step left for phase ${phase} (call ${count + 1}; the script has ${steps.length})`);
  return { step, call: count + 1 };
}

async function main() {
  const scriptPath = values.script;
  const statePath = values.state;
  const phase = values.phase;
  const resultFile = values['result-file'];
  if (!scriptPath || !statePath || !phase || !resultFile)
    fail('usage: --script S --state STATE --phase P --result-file R', 2);
  const script = readJson(scriptPath, undefined);
  const state = readJson(statePath, { calls: {} });
  const callKey = values['call-key'];
  const { step, call, again } = pickStep(script, phase, state, callKey);
  if (!again) state.calls[phase] = call;
  if (callKey !== undefined) state.keys = { ...state.keys, [callKey]: { phase, call } };
  writeAtomically(statePath, JSON.stringify(state));
  say({ type: 'replay.step', phase, call, description: step.description ?? null });
  if (step.delayMs) await new Promise((done) => setTimeout(done, step.delayMs));
  const root = realpathSync(process.cwd());
  for (const [path, content] of Object.entries(step.write ?? {})) {
    const text =
      typeof content === 'string' ? content : readFileSync(join(dirname(scriptPath), content.from));
    const target = inside(root, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
  }
  for (const path of step.delete ?? []) rmSync(inside(root, path), { force: true, recursive: true });
  if (step.result !== undefined) writeAtomically(resultFile, `${JSON.stringify(step.result, null, 2)}\n`);
  if (step.loop !== undefined)
    writeAtomically(resultFile.replace(/\.json$/, '.loop.json'), `${JSON.stringify(step.loop, null, 2)}\n`);
  if (step.stdout !== undefined)
    process.stdout.write(step.stdout.endsWith('\n') ? step.stdout : `${step.stdout}\n`);
  say({ type: 'replay.result', costUsd: step.costUsd ?? null, tokens: step.tokens ?? null });
  process.exitCode = step.exitCode ?? 0;
}

await main();

#!/usr/bin/env node
// The plugin's Stop hook: while the goal recorded by /allium-loop has not converged, it keeps the Claude Code
// session going, with what is left to do as the reason. The verdict is the engine's own: it asks `allium-loop list
// --json` how the goal's run stands and never reads the ledger itself. It lets the session stop when the run
// converged, when the engine's caps ended it (the user decides then), when no goal is recorded, after
// ALLIUM_LOOP_MAX_BLOCKS blocks (default 10), or when allium-loop cannot be run at all (it never traps a session).
// Input: Claude Code's hook JSON on stdin ({ cwd, stop_hook_active, ... }). Output: {"decision":"block","reason"}
// to keep going, or nothing / {"systemMessage"} to let the session stop. ALLIUM_LOOP_BIN overrides the command.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CAPS = new Set(['max_ticks', 'no_progress', 'budget_exhausted']);
const RESUMABLE = new Set(['failed', 'cancelled', 'timed_out']);

function readInput() {
  try {
    return JSON.parse(readFileSync(0, 'utf8') || '{}');
  } catch {
    return {};
  }
}

function say(output) {
  process.stdout.write(`${JSON.stringify(output)}\n`);
  process.exit(0);
}

const input = readInput();
const cwd = typeof input.cwd === 'string' && input.cwd !== '' ? input.cwd : process.cwd();
const statePath = join(cwd, '.claude', 'allium-loop.local.json');
let state;
try {
  state = JSON.parse(readFileSync(statePath, 'utf8'));
} catch {
  process.exit(0); // no goal recorded: nothing to hold the session to
}
const goal = String(state.goal ?? '');
const release = (message) => {
  rmSync(statePath, { force: true });
  say({ systemMessage: `allium-loop: ${message}` });
};

const max = Number(process.env.ALLIUM_LOOP_MAX_BLOCKS ?? 10);
if ((state.blocks ?? 0) >= max)
  release(`stopped holding the session to "${goal}" after ${max} reminders; resume by hand with allium-loop resume.`);

const [bin, ...prefix] = (process.env.ALLIUM_LOOP_BIN ?? 'allium-loop').split(' ').filter((p) => p !== '');
let runs;
try {
  const out = execFileSync(bin, [...prefix, 'list', '--json'], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  runs = out.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line));
} catch (error) {
  release(`could not ask the engine (${error.code ?? error.message}); is allium-loop installed? (npm i -g allium-loop)`);
}

const run = runs.filter((row) => row.goal === goal).at(-1);
let reason;
if (run === undefined) {
  reason = `The goal "${goal}" has no allium-loop run yet. Start it: allium-loop run "${goal}" --quiet`;
} else if (run.terminal === 'converged') {
  release(`the run ${run.slug} converged (engine verdict).`);
} else if (CAPS.has(run.terminal)) {
  release(`the run ${run.slug} ended at an engine cap (${run.terminal}); ask the user how to proceed.`);
} else if (run.terminal === 'awaiting_input') {
  reason = `The run ${run.slug} is awaiting input. Show the user its blocking questions (allium-loop report ${run.slug}), record each answer with allium-loop answer ${run.slug} <question-id> "<answer>", then allium-loop resume ${run.slug}.`;
} else if (RESUMABLE.has(run.terminal)) {
  reason = `The run ${run.slug} ended ${run.terminal}, not converged. Read allium-loop report ${run.slug}, fix what it names, then allium-loop resume ${run.slug}.`;
} else {
  reason = `The run ${run.slug} has not converged yet (status ${run.status}, ${run.ticks} tick(s)). Wait for it or check allium-loop status ${run.slug}; if no process is running it, allium-loop resume ${run.slug}.`;
}
writeFileSync(statePath, `${JSON.stringify({ ...state, blocks: (state.blocks ?? 0) + 1 }, null, 2)}\n`);
say({ decision: 'block', reason });

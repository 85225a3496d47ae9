#!/usr/bin/env node
// Records (or clears) the goal a Claude Code session is held to by the plugin's Stop hook.
// Usage: node goal.mjs start "<goal>" | node goal.mjs clear | node goal.mjs show
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where the session's goal lives: per project, beside Claude Code's own local settings, never in the ledger. */
export const STATE_FILE = join('.claude', 'allium-loop.local.json');

const [action, ...words] = process.argv.slice(2);
const path = join(process.cwd(), STATE_FILE);
if (action === 'start') {
  const goal = words.join(' ').trim();
  if (goal === '') {
    process.stderr.write('goal.mjs start: give the goal, e.g. goal.mjs start "add gift cards"\n');
    process.exit(2);
  }
  mkdirSync(join(process.cwd(), '.claude'), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ goal, blocks: 0, startedAt: new Date().toISOString() }, null, 2)}\n`);
  process.stdout.write(`allium-loop goal recorded: "${goal}" (the Stop hook holds the session to it until it converges)\n`);
} else if (action === 'clear') {
  rmSync(path, { force: true });
  process.stdout.write('allium-loop goal cleared.\n');
} else if (action === 'show') {
  try {
    process.stdout.write(readFileSync(path, 'utf8'));
  } catch {
    process.stdout.write('no allium-loop goal recorded.\n');
  }
} else {
  process.stderr.write('usage: goal.mjs start "<goal>" | clear | show\n');
  process.exit(2);
}

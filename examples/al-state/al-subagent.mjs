#!/usr/bin/env node
// A subagent of the `/al` loop for the compatibility fixture, written from the skill's documented prompt template
// and state file (see README.md): it reads its prompt on stdin, takes the state file from the `State file:` line
// and its iteration from `Iteration: <N> of <max>`, does ONE unit of work (one CSV file of ./data), and writes the
// state file back the documented way: the whole JSON to .al-state.tmp beside it, then a rename over it. Its reply
// text says nothing about completion; only the state file does.
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const prompt = readFileSync(0, 'utf8');
const line = (pattern) => {
  const match = pattern.exec(prompt);
  if (match === null) {
    process.stderr.write(`al-subagent: the prompt has no line matching ${String(pattern)}\n`);
    process.exit(2);
  }
  return match;
};
const statePath = line(/^State file: (.+)$/m)[1].trim();
const [, n, max] = line(/^Iteration: (\d+) of (\d+)$/m).map(Number);
if (n > max) {
  process.stderr.write(`al-subagent: iteration ${String(n)} is past the max ${String(max)}\n`);
  process.exit(2);
}
const state = JSON.parse(readFileSync(statePath, 'utf8'));

const SUMMARY = join('output', 'summary.json');
const summary = existsSync(SUMMARY) ? JSON.parse(readFileSync(SUMMARY, 'utf8')) : { files: [], records: [] };
const files = readdirSync('data')
  .filter((name) => name.endsWith('.csv'))
  .sort();
const next = files.find((name) => !summary.files.includes(name));

function writeState(next) {
  const temp = join(dirname(statePath), '.al-state.tmp');
  writeFileSync(temp, `${JSON.stringify(next, null, 2)}\n`);
  renameSync(temp, statePath);
}

if (next !== undefined) {
  const [header, ...rows] = readFileSync(join('data', next), 'utf8').trim().split('\n');
  const keys = header.split(',');
  for (const row of rows) {
    const cells = row.split(',');
    summary.records.push(Object.fromEntries(keys.map((key, i) => [key, cells[i]])));
  }
  summary.files.push(next);
  mkdirSync('output', { recursive: true });
  writeFileSync(SUMMARY, `${JSON.stringify(summary, null, 2)}\n`);
}
const left = files.filter((name) => !summary.files.includes(name));
const progress = `processed ${summary.files.join(', ')} (${String(summary.files.length)} of ${String(files.length)} files)`;
writeState(
  left.length === 0
    ? {
        status: 'done',
        iteration: n,
        goal: state.goal,
        progress,
        result: `summary written to ./output/summary.json with ${String(summary.records.length)} records`,
      }
    : { status: 'in_progress', iteration: n, goal: state.goal, progress },
);
process.stdout.write(`iteration ${String(n)} of ${String(max)}: ${progress}\n`);

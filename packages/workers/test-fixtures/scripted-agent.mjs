#!/usr/bin/env node
// A scripted stand-in for a coding agent, run as a real child process by the workers' tests.
// Usage: node scripted-agent.mjs <scenario.json> <result-file>; the prompt arrives on stdin. The scenario is a list of steps carried out in order, relative to the working directory:
//   { "op": "write", "path", "text" }          create or overwrite a file
//   { "op": "replace", "path", "find", "with" } replace the first occurrence of a string
//   { "op": "delete", "path" }                  remove a file
//   { "op": "result", "json" }                  write the result file atomically (temp file + rename)
//   { "op": "exit", "code" }                    stop with an exit code
// The agent refuses (exit 3) a prompt that does not name its result file.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, relative } from 'node:path';

const steps = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const resultFile = process.argv[3];
const prompt = readFileSync(0, 'utf8');
if (!resultFile || !prompt.includes(relative(process.cwd(), resultFile))) {
  process.stderr.write('the prompt does not name the result file\n');
  process.exit(3);
}

function write(path, text) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

for (const step of steps) {
  if (step.op === 'write') write(step.path, step.text);
  else if (step.op === 'replace') {
    const text = readFileSync(step.path, 'utf8');
    if (!text.includes(step.find)) throw new Error(`${step.path} has no ${JSON.stringify(step.find)}`);
    writeFileSync(step.path, text.replace(step.find, step.with));
  } else if (step.op === 'delete') rmSync(step.path, { force: true });
  else if (step.op === 'result') {
    const temp = `${resultFile}.tmp-${process.pid}`;
    write(temp, JSON.stringify(step.json, null, 2));
    renameSync(temp, resultFile);
  } else if (step.op === 'exit') process.exit(step.code);
  else throw new Error(`unknown step ${step.op}`);
}
process.stdout.write(`done: ${steps.length} step(s)\n`);

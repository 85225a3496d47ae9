#!/usr/bin/env node
// A scripted stand-in for a coding agent, run as a real child process by the workers' tests.
// Usage: node scripted-agent.mjs <scenario.json> <result-file>; the prompt arrives on stdin. The scenario is a list of steps carried out in order, relative to the working directory:
//   { "op": "write", "path", "text" }          create or overwrite a file
//   { "op": "replace", "path", "find", "with" } replace the first occurrence of a string
//   { "op": "delete", "path" }                  remove a file
//   { "op": "result", "json" }                  write the result file atomically (temp file + rename); a
//                                               `generated_tests[].hash` of "sha256:of-file" becomes the file's
//                                               sha256 as it is on disk (the agent hashing what it wrote)
//   { "op": "loop", "json" }                    write the engine-side record beside it (`<tick>-<phase>.loop.json`)
//   { "op": "exit", "code" }                    stop with an exit code
// The agent refuses (exit 3) a prompt that does not name its result file.
import { createHash } from 'node:crypto';
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

function writeAtomically(path, json) {
  const temp = `${path}.tmp-${process.pid}`;
  write(temp, JSON.stringify(json, null, 2));
  renameSync(temp, path);
}

function withHashes(json) {
  if (!Array.isArray(json?.generated_tests)) return json;
  const hashOf = (path) =>
    `sha256:${createHash('sha256').update(readFileSync(path, 'utf8'), 'utf8').digest('hex')}`;
  const tests = json.generated_tests.map((t) =>
    t.hash === 'sha256:of-file' ? { ...t, hash: hashOf(t.path) } : t,
  );
  return { ...json, generated_tests: tests };
}

for (const step of steps) {
  if (step.op === 'write') write(step.path, step.text);
  else if (step.op === 'replace') {
    const text = readFileSync(step.path, 'utf8');
    if (!text.includes(step.find)) throw new Error(`${step.path} has no ${JSON.stringify(step.find)}`);
    writeFileSync(step.path, text.replace(step.find, step.with));
  } else if (step.op === 'delete') rmSync(step.path, { force: true });
  else if (step.op === 'result') writeAtomically(resultFile, withHashes(step.json));
  else if (step.op === 'loop') writeAtomically(resultFile.replace(/\.json$/, '.loop.json'), step.json);
  else if (step.op === 'exit') process.exit(step.code);
  else throw new Error(`unknown step ${step.op}`);
}
process.stdout.write(`done: ${steps.length} step(s)\n`);

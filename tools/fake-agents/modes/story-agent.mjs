#!/usr/bin/env node
// A scripted generator/evaluator for the `command` adapter in the `--stories` tests:
//   node story-agent.mjs <plan.json> {phase} {prompt_file} {result_file}
// The plan is `{ "generate": [step…], "evaluate": [step…] }`, a step `{ "write": { "<path>": "<content>" },
// "verdict": { "verdict": "PASS" }, "exitCode": 0 }`; call N of a phase plays its entry N (the last entry
// repeats). Counts and a copy of each prompt (`<plan.json>.<phase>-<n>.prompt.txt`) are kept beside the plan,
// outside the project.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const [planPath, phase, promptFile, resultFile] = process.argv.slice(2);
if (planPath === undefined || phase === undefined) {
  process.stderr.write('usage: story-agent.mjs <plan.json> <phase> <prompt_file> <result_file>\n');
  process.exit(2);
}
const plan = JSON.parse(readFileSync(planPath, 'utf8'));
const steps = plan[phase] ?? [];
const countFile = `${planPath}.${phase}.count`;
const call = existsSync(countFile) ? Number(readFileSync(countFile, 'utf8')) + 1 : 1;
writeFileSync(countFile, String(call));
if (promptFile !== undefined && existsSync(promptFile))
  copyFileSync(promptFile, `${planPath}.${phase}-${String(call)}.prompt.txt`);
const step = steps[Math.min(call, steps.length) - 1] ?? {};
for (const [path, content] of Object.entries(step.write ?? {})) {
  const target = resolve(process.cwd(), path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, content);
}
if (step.verdict !== undefined && resultFile !== undefined) {
  mkdirSync(dirname(resultFile), { recursive: true });
  writeFileSync(`${resultFile}.tmp`, JSON.stringify(step.verdict));
  renameSync(`${resultFile}.tmp`, resultFile);
}
process.stdout.write(`story-agent: ${phase} call ${String(call)}\n`);
process.exit(step.exitCode ?? 0);

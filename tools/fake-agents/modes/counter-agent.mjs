#!/usr/bin/env node
// A scripted agent for the `command` adapter in the loop-mode tests: `node counter-agent.mjs <plan.json>`.
// The plan is `{ "calls": [{ "write": { "<path>": "<content>" }, "delete": ["<path>"], "exitCode": 0 }] }`;
// call N plays entry N (the last entry repeats). The call count is kept in `<plan.json>.count`, outside the
// project, so the agent leaves nothing of its own in the working tree.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const planPath = process.argv[2];
if (planPath === undefined) {
  process.stderr.write('usage: counter-agent.mjs <plan.json>\n');
  process.exit(2);
}
const plan = JSON.parse(readFileSync(planPath, 'utf8'));
const countFile = `${planPath}.count`;
const call = existsSync(countFile) ? Number(readFileSync(countFile, 'utf8')) + 1 : 1;
writeFileSync(countFile, String(call));
const step = plan.calls[Math.min(call, plan.calls.length) - 1] ?? {};
for (const [path, content] of Object.entries(step.write ?? {})) {
  const target = resolve(process.cwd(), path);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, typeof content === 'string' ? content : `${JSON.stringify(content, null, 2)}\n`);
}
for (const path of step.delete ?? []) rmSync(resolve(process.cwd(), path), { force: true });
process.stdout.write(`counter-agent: call ${String(call)}\n`);
process.exit(step.exitCode ?? 0);

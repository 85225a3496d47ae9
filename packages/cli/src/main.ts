#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import { formatError } from '@allium-loop/errors';
import { runCli } from './run-cli.js';

// The composition root: the only module that reads process.argv, writes to the console or exits the process.
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

const abort = new AbortController();
let signals = 0;
const onSignal = (): void => {
  signals += 1;
  // The first Ctrl-C cancels cleanly (children killed, ledger intact); a second one exits at once.
  if (signals > 1) process.exit(130);
  process.stderr.write('\nallium-loop: cancelling (Ctrl-C again to quit at once)…\n');
  abort.abort();
};
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true;

async function prompt(question: string): Promise<string | undefined> {
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await rl.question(question);
  } catch {
    return undefined;
  } finally {
    rl.close();
  }
}

try {
  process.exitCode = await runCli(
    process.argv.slice(2),
    {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
      cwd: process.cwd(),
      env: process.env,
      isTTY: process.stdout.isTTY === true,
      signal: abort.signal,
      now: () => Date.now(),
      ...(interactive ? { prompt } : {}),
    },
    { version },
  );
} catch (error) {
  process.stderr.write(`allium-loop: ${formatError(error)}\n`);
  process.exitCode = 1;
}

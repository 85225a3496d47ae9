#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { runAsProcess } from './process-io.js';
import { runCli } from './run-cli.js';

// The composition root of every command (`spec-main.ts` is the one of `spec` alone, for its start-up time). It
// loads as little as it can: every command is imported on first use, so --version and --help start fast.
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

/** Asks one question on the terminal (readline loaded only then); `undefined` on EOF. */
async function prompt(question: string): Promise<string | undefined> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return await rl.question(question);
  } catch {
    return undefined;
  } finally {
    rl.close();
  }
}

await runAsProcess((argv, io) => runCli(argv, io, { version }), { prompt });

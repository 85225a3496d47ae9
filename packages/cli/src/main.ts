#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import { formatError } from '@allium-loop/errors';
import { runCli } from './run-cli.js';

// The composition root: the only module that reads process.argv, writes to the console or exits the process.
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  version: string;
};

try {
  process.exitCode = await runCli(
    process.argv.slice(2),
    {
      stdout: (text) => process.stdout.write(text),
      stderr: (text) => process.stderr.write(text),
      cwd: process.cwd(),
      env: process.env,
      isTTY: process.stdout.isTTY === true,
    },
    { version },
  );
} catch (error) {
  process.stderr.write(`allium-loop: ${formatError(error)}\n`);
  process.exitCode = 1;
}

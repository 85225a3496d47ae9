#!/usr/bin/env node
// The `allium-loop` executable, in this repository and in the published package alike. It is committed (not built)
// so that `npm ci` links node_modules/.bin/allium-loop before anything is built; it then loads the built CLI from
// dist/.
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-v')) {
  // Answered here, without loading the CLI, so `--version` starts as fast as Node itself (tools/bench/startup).
  // The text is the CLI's own (`run-cli.ts`), read from the same package.json; main.test.ts holds them equal.
  const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(`allium-loop ${version}\n`);
} else {
  // `spec …` has an entry of its own, which answers exactly as main.js does for it but loads only the spec tooling,
  // one file run with a V8 code cache (package/spec-entry.mjs): a spec check is a one-shot process whose start-up
  // the user waits for. (The launcher, bin/allium-loop, starts Node on that entry directly.)
  const name = args[0] === 'spec' ? 'spec-loader.cjs' : 'main.js';
  const entry = new URL(`../dist/${name}`, import.meta.url);
  try {
    await import(entry.href);
  } catch (error) {
    const missing =
      error !== null &&
      typeof error === 'object' &&
      error.code === 'ERR_MODULE_NOT_FOUND' &&
      String(error.message).includes(`dist/${name}`);
    if (!missing) throw error;
    process.stderr.write(
      `allium-loop: the CLI is not built yet (packages/cli/dist/${name} is missing).\n` +
        'Run `npm run build` at the repository root, then try again.\n',
    );
    process.exitCode = 1;
  }
}

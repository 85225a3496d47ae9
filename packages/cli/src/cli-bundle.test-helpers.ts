import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The `allium-loop` executable the end-to-end tests start: this run's bundle of the current sources. */
    cliBin: string;
  }
}

const BUILD = fileURLToPath(new URL('../package/build.mjs', import.meta.url));

/**
 * The global setup of the cli tests (vitest.config.ts): bundles the CLI from the current sources once per test run
 * (the npm package's own build, `package/build.mjs`, into a temporary folder) for the tests that start it as a child
 * process. Starting it through tsx instead transpiled and loaded some two hundred source modules in every child:
 * about 1.1 s of CPU a start against 0.4 s, hundreds of starts a run, on a CI machine of two busy cores.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'allium-loop-test-cli-'));
  execFileSync(process.execPath, [BUILD, '--out', dir], { stdio: 'pipe' });
  project.provide('cliBin', join(dir, 'bin', 'allium-loop.js'));
  return () => rmSync(dir, { recursive: true, force: true });
}

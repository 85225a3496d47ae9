#!/usr/bin/env node
// The entry of `allium-loop spec …`, built the same way for the npm package (build.mjs) and for the repository's own
// CLI (the `bundle-spec` target, which `build` depends on): into DIST,
// - spec.cjs: src/spec-main.ts and everything it imports as one CommonJS file, nothing else in it;
// - spec-loader.cjs: src/spec-loader.ts, also CommonJS, which runs spec.cjs through V8 with its code cache (the
//   launcher starts Node on it for `spec`, the Node shim imports it);
// - spec.cjs.cache and spec.cjs.shim.cache: that cache, the bytecode of the spec code compiled while the CLI ran
//   `spec analyse` over the allium package's fixtures (whose constructs and errors reach nearly every function of
//   it), once started by the launcher and once by the Node shim (see writeSpecCodeCache); then a fresh process must
//   accept each, or the build fails (a cache V8 rejects would only cost time, silently).
// Node loads one file instead of a module per source file, and compiles next to nothing of it again
// (tools/bench/spec/README.md, sixth and seventh passes).
// Usage: node packages/cli/package/spec-entry.mjs DIST   (the repository's packages/cli/dist)
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const cli = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(cli, '..', '..');

/** Bundles spec.cjs and spec-loader.cjs into `dist` (see the header). */
export async function bundleSpecEntry(dist) {
  const common = {
    outdir: dist,
    bundle: true,
    platform: 'node',
    target: 'node20.19',
    // Workspace packages resolve to their TypeScript sources, as in the tests.
    conditions: ['development'],
    legalComments: 'linked',
    logLevel: 'warning',
    splitting: false,
  };
  await build({
    ...common,
    entryPoints: {
      spec: join(cli, 'src', 'spec-main.ts'),
      'spec-loader': join(cli, 'src', 'spec-loader.ts'),
    },
    format: 'cjs',
    outExtension: { '.js': '.cjs' },
    // spec-loader.ts reads `import.meta` only where `__dirname` is missing, which in CommonJS it never is.
    logOverride: { 'empty-import-meta': 'silent' },
  });
}

/**
 * Writes `dist`/spec.cjs.cache by running the launcher in `bin` (the folder of the package whose dist is `dist`), and
 * `dist`/spec.cjs.shim.cache by running its Node shim: V8 takes a cache only under the flags it was written with, and
 * the launcher gives them on Node's command line where the shim's `spec` sets them at run time (v8-tuning.ts). Then
 * checks that a fresh process started either way takes its cache.
 */
export function writeSpecCodeCache(bin, dist) {
  const fixtures = join(root, 'packages', 'allium', 'src', 'fixtures');
  const starts = [
    { cache: 'spec.cjs.cache', command: [join(bin, 'allium-loop')] },
    { cache: 'spec.cjs.shim.cache', command: [process.execPath, join(bin, 'allium-loop.js')] },
  ];
  for (const { cache, command } of starts) {
    const run = (args, mode) =>
      spawnSync(command[0], [...command.slice(1), 'spec', ...args], {
        env: { ...process.env, ALLIUM_LOOP_CODE_CACHE: mode },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      });
    const file = join(dist, cache);
    rmSync(file, { force: true });
    const written = run(['analyse', '--json', fixtures], 'write');
    // `analyse` exits 1 on findings, which the fixtures have; anything else, or no cache, is a failure.
    if (written.error !== undefined || ![0, 1].includes(written.status ?? -1) || !existsSync(file))
      throw new Error(`writing the code cache ${cache} failed (exit ${written.status}): ${written.stderr}`);
    const checked = run(['check', '--json', fixtures], 'report');
    if (!checked.stderr.startsWith('code cache: accepted\n'))
      throw new Error(
        `a fresh process does not take the code cache ${cache}: ${checked.stderr.slice(0, 500)}`,
      );
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dist = process.argv[2];
  if (dist === undefined) throw new Error('usage: node packages/cli/package/spec-entry.mjs DIST');
  await bundleSpecEntry(resolve(dist));
  writeSpecCodeCache(join(cli, 'bin'), resolve(dist));
}

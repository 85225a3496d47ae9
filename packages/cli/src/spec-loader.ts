// The entry of `allium-loop spec …`, in the npm package and in the repository alike: bundled as CommonJS into
// dist/spec-loader.cjs by package/spec-entry.mjs (which the package's build.mjs and the repository's `bundle-spec`
// target run). The launcher (bin/allium-loop) starts Node on it directly, so no ES module loader is set up for `spec`
// (8 ms and 1 MB of an empty spec's check here); the Node shim (bin/allium-loop.js) imports it. It runs
// dist/spec.cjs, the one-file CommonJS bundle of src/spec-main.ts, through V8 with the code cache built with it
// (dist/spec.cjs.cache): the bytecode of every function the build's own `spec analyse` of the fixtures compiled,
// which is nearly all a spec check runs, so next to nothing is compiled again in the user's process. Compiling
// lazily cost 5–15 ms of start-up and 20–60 ms of a 50k-line check (tools/bench/spec/README.md, sixth pass).
//
// V8 accepts the cache only from the same V8 version, with the same flags and the same source; otherwise, or when
// the file is missing or damaged, it says so and compiles as usual: the answer is the same either way, only slower.
// The cache is written only at build time (ALLIUM_LOOP_CODE_CACHE=write, by spec-entry.mjs), never by a user's run, so
// nothing outside the CLI's own built files is ever executed. The V8 flags `spec` sets are set here first,
// because V8 takes a cache only under the flags it was written with; and since flags on Node's command line and the
// same flags set at run time do not count as the same to it, there is a cache for each way of starting `spec`:
// dist/spec.cjs.cache for the launcher's (the flags on the command line) and dist/spec.cjs.shim.cache for the Node
// shim's (set at run time; see v8-tuning.ts). Like the bin shim, this
// runs before the process boundary (process-io.ts) exists: it reads the environment and writes to stderr itself.
//
// ALLIUM_LOOP_CODE_CACHE=report prints on stderr whether the cache was used (`code cache: accepted`, `rejected` or
// `absent`); the package's tests check it.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { tuneV8ForOneCheck, v8FlagsOnCommandLine } from './commands/v8-tuning.js';

tuneV8ForOneCheck();
// Built as CommonJS, where `__dirname` is this file's folder; tsc's ES module of this file (never run) has
// `import.meta` instead.
const here = typeof __dirname === 'string' ? __dirname : dirname(fileURLToPath(import.meta.url));
const bundle = join(here, 'spec.cjs');
const cacheFile = v8FlagsOnCommandLine() ? `${bundle}.cache` : `${bundle}.shim.cache`;
const mode = process.env['ALLIUM_LOOP_CODE_CACHE'];

let cachedData: Buffer | undefined;
if (mode !== 'write') {
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // No cache (a package built without one): compile as usual.
  }
}
// CommonJS's own wrapper, so the bundle runs as Node would run it as a module. The cache keeps the name of the script
// it was written from, so the build names it without the build machine's path (a user's run names the real file).
const script = new Script(
  `(function (exports, require, module, __filename, __dirname) {${readFileSync(bundle, 'utf8')}\n})`,
  {
    filename: mode === 'write' ? 'allium-loop/dist/spec.cjs' : bundle,
    ...(cachedData === undefined ? {} : { cachedData }),
  },
);
if (mode === 'report') {
  const state =
    cachedData === undefined ? 'absent' : script.cachedDataRejected === true ? 'rejected' : 'accepted';
  process.stderr.write(`code cache: ${state}\n`);
}
if (mode === 'write') {
  // After the run, so the cache holds every function the check compiled, not only the bundle's top level.
  process.once('beforeExit', () => {
    try {
      writeFileSync(cacheFile, script.createCachedData());
    } catch (error) {
      process.stderr.write(
        `allium-loop: cannot write the code cache ${cacheFile}: ${(error as Error).message}\n`,
      );
      process.exitCode = 1;
    }
  });
}
const module = { exports: {} };
const run = script.runInThisContext() as (
  exports: unknown,
  require: NodeJS.Require,
  module: unknown,
  filename: string,
  dirname: string,
) => void;
// The bundle's `require` is this file's own (the two lie in one folder, and the bundle requires only Node's built-in
// modules): `node:module`'s createRequire would load Node's ES module loader for nothing. tsc's ES module of this
// file (never run) has no `require` and asks Node for the module.
const requireHere =
  typeof require === 'function' ? require : process.getBuiltinModule('node:module').createRequire(bundle);
run(module.exports, requireHere, module, bundle, dirname(bundle));

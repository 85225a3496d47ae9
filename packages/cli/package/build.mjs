#!/usr/bin/env node
// Builds the publishable `allium-loop` package into packages/cli/package/out/: the CLI bundled by esbuild (every
// workspace package and registry dependency inlined, so the package has no dependencies at all), each command in
// its own chunk so `--version` loads almost nothing, plus the files the bundle reads at run time: the replay
// agent's script, the workers' prompt templates and the demo example.
// Usage: node packages/cli/package/build.mjs [--pack] [--out DIR]   (--pack also runs `npm pack` and prints the
// tarball path; --out builds into DIR instead of packages/cli/package/out: the cli tests build their own copy)
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { bundleSpecEntry, writeSpecCodeCache } from './spec-entry.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const cli = join(here, '..');
const root = join(cli, '..', '..');
const outFlag = process.argv.indexOf('--out');
const out = outFlag === -1 ? join(here, 'out') : process.argv[outFlag + 1];
if (out === undefined) throw new Error('--out needs a directory');
const manifest = JSON.parse(readFileSync(join(cli, 'package.json'), 'utf8'));

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const common = {
  outdir: join(out, 'dist'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  // Workspace packages resolve to their TypeScript sources, as in the tests.
  conditions: ['development'],
  // CommonJS dependencies inside an ES module bundle need a real `require` for Node's built-ins.
  banner: {
    js: "import { createRequire as __alliumRequire } from 'node:module'; const require = __alliumRequire(import.meta.url);",
  },
  legalComments: 'linked',
  logLevel: 'warning',
};
await build({ ...common, entryPoints: { main: join(cli, 'src', 'main.ts') }, splitting: true });
// `spec …` has an entry of its own, built as for the repository's CLI (spec-entry.mjs): dist/spec-loader.cjs runs the
// one CommonJS file dist/spec.cjs with the V8 code cache written below.
await bundleSpecEntry(join(out, 'dist'));

// The command npm links (`bin`) is the POSIX launcher, which starts Node on the spec entry for `spec` and on the shim
// beside it for everything else (bin/allium-loop).
cpSync(join(cli, 'bin', 'allium-loop'), join(out, 'bin', 'allium-loop'));
chmodSync(join(out, 'bin', 'allium-loop'), 0o755);
cpSync(join(cli, 'bin', 'allium-loop.js'), join(out, 'bin', 'allium-loop.js'));
cpSync(join(root, 'packages', 'agents', 'bin', 'replay-agent.mjs'), join(out, 'bin', 'replay-agent.mjs'));
cpSync(join(root, 'packages', 'workers', 'templates'), join(out, 'templates'), { recursive: true });
cpSync(join(root, 'examples', 'demo'), join(out, 'examples', 'demo'), { recursive: true });
cpSync(join(here, 'README.md'), join(out, 'README.md'));

const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
writeFileSync(
  join(out, 'package.json'),
  `${JSON.stringify(
    {
      name: manifest.name,
      version: manifest.version,
      description: rootManifest.description,
      license: rootManifest.license,
      type: 'module',
      bin: { 'allium-loop': './bin/allium-loop' },
      engines: rootManifest.engines,
      files: ['bin', 'dist', 'templates', 'examples', 'README.md'],
    },
    null,
    2,
  )}\n`,
);

writeSpecCodeCache(join(out, 'bin'), join(out, 'dist'));

if (process.argv.includes('--pack')) {
  const [packed] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', here], { cwd: out, encoding: 'utf8' }),
  );
  process.stdout.write(`${join(here, packed.filename)}\n`);
} else {
  process.stdout.write(`${out}\n`);
}

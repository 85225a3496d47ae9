import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdir, mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, inject, it, onTestFinished } from 'vitest';
import { ctrlCTwiceWhileReading } from './fifo.test-helpers.js';
import { runIntoWaitingSocket } from './socket-reader.test-helpers.js';

const execFileAsync = promisify(execFile);
const main = fileURLToPath(new URL('./main.ts', import.meta.url));
const specMain = fileURLToPath(new URL('./spec-main.ts', import.meta.url));
const SHIM = fileURLToPath(new URL('../bin/allium-loop.js', import.meta.url));
/**
 * The command npm links, which starts the built spec entry: the launcher of the package the cli tests' global setup
 * builds from the current sources (cli-bundle.test-helpers.ts). Not the repository's own `bin/allium-loop`, which
 * starts `dist/spec-loader.cjs` only after a build: `npm ci && npm test` on a fresh clone has none, and a stale one
 * would be tested instead of the sources.
 */
const LAUNCHER = join(dirname(inject('cliBin')), 'allium-loop');

/** Runs `node` with `args` as a child process. */
async function runNode(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, args, {
      env: { ...process.env, FORCE_COLOR: '0', ...env },
      maxBuffer: 64 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Runs the real CLI entry as a child process, from source, the way `node` would run the built one. */
function runMain(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runNode(['--conditions=development', '--import', 'tsx', main, ...args]);
}

/** The modules (file URLs) a run of `entry` with `args` loads, listed by a resolve hook; and how it ended. */
async function modulesLoaded(entry: string, args: string[]): Promise<{ code: number; loaded: string[] }> {
  const hooks =
    "export async function resolve(s, c, next) { const r = await next(s, c); if (r.url.startsWith('file:')) " +
    "process.stderr.write('LOADED ' + r.url + '\\n'); return r; }";
  const register = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});`;
  const result = await runNode([
    '--conditions=development',
    '--import',
    'tsx',
    '--import',
    `data:text/javascript,${encodeURIComponent(register)}`,
    entry,
    ...args,
  ]);
  const loaded = result.stderr
    .split('\n')
    .filter((line) => line.startsWith('LOADED '))
    .map((line) => line.slice('LOADED '.length));
  return { code: result.code, loaded };
}

describe('allium-loop as a process', () => {
  it('prints help and exits 0', async () => {
    const result = await runMain('--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: allium-loop <command>');
  });

  it('exits 2 on an unknown command', async () => {
    const result = await runMain('frobnicate');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("unknown command 'frobnicate'");
  });
});

describe('what a command loads', () => {
  it('spec check loads the spec package and the project walker, not the engine, zod or execa', async () => {
    // Start-up is part of what `spec check` costs (tools/bench/spec): the verify package's index alone pulled in the
    // test runners, the agents, the ledger schemas, zod and execa, tripling it. A resolve hook lists every module.
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-loads-'));
    const spec = join(dir, 'empty.allium');
    await writeFile(spec, '-- allium: 3\n');
    for (const entry of [main, specMain]) {
      const { code, loaded } = await modulesLoaded(entry, ['spec', 'check', '--json', spec]);
      expect(code).toBe(0);
      expect(loaded.some((url) => url.includes('/packages/allium/src/'))).toBe(true);
      const heavy = loaded.filter((url) =>
        /\/node_modules\/(zod|execa|yaml)\/|\/packages\/(agents|orchestrator|workers|evaluator|decomposer)\/|\/packages\/verify\/src\/index\.ts|\/packages\/ledger\/src\/index\.ts/.test(
          url,
        ),
      );
      expect(heavy).toEqual([]);
      // The spec entry is the spec command alone: not the table of every command, nor another command's module.
      if (entry === specMain)
        expect(
          loaded.filter((url) =>
            /\/packages\/cli\/src\/(run-cli|commands\/(?!spec\.ts|v8-tuning\.ts))/.test(url),
          ),
        ).toEqual([]);
    }
  });
});

describe('the spec entry', () => {
  it('answers every spec command line exactly as main does, through the same redactor', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-spec-main-'));
    const spec = join(dir, 'orders.allium');
    // An entity named like the value of a secret variable: its diagnostics quote the name, which must not show.
    await writeFile(spec, '-- allium: 3\n\nentity OrderWidgetSecret {\n  total: Integer\n}\n');
    const env = { DEPLOY_TOKEN: 'OrderWidgetSecret' };
    const lines = [
      ['spec', 'check', '--json', spec],
      ['spec', 'check', spec],
      ['spec', 'analyse', '--json', spec],
      ['spec', '--help'],
      ['spec', 'check', '--help'],
      ['spec'],
      ['spec', 'frobnicate'],
      ['spec', 'check', '--bogus'],
      ['spec', 'model', spec, spec],
      ['spec', 'check', join(dir, 'missing.allium')],
    ];
    let redacted = 0;
    for (const args of lines) {
      const viaMain = await runNode(['--conditions=development', '--import', 'tsx', main, ...args], env);
      const viaSpec = await runNode(['--conditions=development', '--import', 'tsx', specMain, ...args], env);
      expect(viaSpec, args.join(' ')).toEqual(viaMain);
      expect(viaMain.stdout + viaMain.stderr).not.toContain('OrderWidgetSecret');
      if (viaMain.stdout.includes('[REDACTED]')) redacted += 1;
    }
    expect(redacted).toBeGreaterThan(0);
  });

  it('ends as soon as its answer is written, unless a beforeExit listener waits for the end', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-spec-exit-'));
    const spec = join(dir, 'orders.allium');
    await writeFile(spec, '-- allium: 3\n\nentity Order {\n  total: Integer\n}\n');
    const args = ['spec', 'check', '--json', spec];
    const entry = ['--conditions=development', '--import', 'tsx'];
    const preload = (code: string): string[] => [
      '--import',
      `data:text/javascript,${encodeURIComponent(code)}`,
    ];
    const plain = await runNode([...entry, specMain, ...args]);
    expect(plain.stdout).toContain('"command": "check"');
    // A timer an hour away would keep a process that ends by itself alive for that hour (the child is killed after
    // two minutes, which fails the test); the spec entry ends once its answer is written.
    const timer = "setTimeout(() => process.stdout.write('an hour later'), 3_600_000);";
    // (SIGKILL: the entry takes SIGTERM as a request to cancel, and would wait for the timer still.)
    const started = execFileAsync(process.execPath, [...entry, ...preload(timer), specMain, ...args], {
      timeout: 120_000,
      killSignal: 'SIGKILL',
    });
    const ended = await started.then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        stdout: error.stdout,
        stderr: error.stderr,
      }),
    );
    expect(ended).toEqual(plain);
    // A beforeExit listener (the build's code-cache writer is one) means something waits for the end: the process
    // then ends as usual, and the listener runs.
    const listener =
      "let once = false; process.on('beforeExit', () => { if (!once) process.stderr.write('beforeExit ran\\n'); once = true; });";
    const natural = await runNode([...entry, ...preload(listener), specMain, ...args]);
    expect(natural).toEqual({ ...plain, stderr: `${plain.stderr}beforeExit ran\n` });
  });
});

describe('the spec entry on a real pipe', () => {
  /** A spec whose JSON report is about 0.5 MB per 1000 entities (the default: far more than a pipe holds). */
  async function bigReportSpec(count = 1000): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-spec-pipe-'));
    const spec = join(dir, 'many.allium');
    const entities = Array.from({ length: count }, (_, i) => `entity Unused${i} {\n  note: String\n}\n`);
    await writeFile(spec, `-- allium: 3\n\n${entities.join('\n')}`);
    return spec;
  }
  // Reports, when the process ends, the most stdout ever held in memory after a write call returned.
  const watch =
    'const w = process.stdout.write.bind(process.stdout); let most = 0; process.stdout.write = (...a) => ' +
    '{ const r = w(...a); most = Math.max(most, process.stdout.writableLength); return r; }; ' +
    "process.on('exit', () => process.stderr.write(`held at most ${most}\\n`));";
  const entry = `"${process.execPath}" --conditions=development --import tsx --import "data:text/javascript,${encodeURIComponent(watch)}" "${specMain}"`;
  const sh = async (command: string): Promise<{ code: number; stdout: string; stderr: string }> => {
    try {
      const { stdout, stderr } = await execFileAsync('sh', ['-c', command], { maxBuffer: 64 << 20 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const failed = error as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };

  it("starts spec without Node's modules it never uses", async () => {
    // Node's stdout and stderr streams (7 ms), fs/promises (with readline, file streams and watchers: reading
    // process.stdin for a prompt `spec` never offers, or fs/promises' own functions) and the ES module loader
    // (node:module's createRequire): 6 ms of an empty spec's check. Node's internal modules are listed in
    // process.moduleLoadList; stdin is a file, as when a spec is checked from a script.
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-modules-'));
    try {
      const preload = join(dir, 'list.cjs');
      await writeFile(
        preload,
        "process.on('exit', () => process._rawDebug('MODULES ' + JSON.stringify(process.moduleLoadList)));\n",
      );
      const spec = join(dir, 'a.allium');
      await writeFile(spec, '-- allium: 3\n\nentity Order {\n  total: Integer\n}\n');
      const input = await open(spec, 'r');
      // Through the launcher, as npm links the command (it starts the spec entry with the V8 flags on the command line).
      const child = spawn(LAUNCHER, ['spec', 'check', '--json', spec], {
        env: { ...process.env, NODE_OPTIONS: `--require ${preload}` },
        stdio: [input.fd, 'pipe', 'pipe'],
      });
      await input.close();
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const [code] = (await once(child, 'close')) as [number];
      expect(code).toBe(1);
      expect(JSON.parse(stdout)).toMatchObject({ command: 'check', spec_file: spec });
      const loaded = JSON.parse(stderr.slice(stderr.indexOf('MODULES ') + 'MODULES '.length)) as string[];
      expect(loaded).toContain('NativeModule vm');
      for (const unused of [
        // The stdout and stderr streams (process-io.ts, descriptorWriter), with the stream and network modules.
        'NativeModule stream',
        'NativeModule net',
        // node:v8: the launcher gives the V8 flags on Node's command line, so `spec` never sets them (v8-tuning.ts).
        'NativeModule v8',
        'NativeModule internal/fs/promises',
        'NativeModule internal/readline/interface',
        'NativeModule internal/modules/esm/loader',
        // AbortController (made only when a command asks for its signal), the callback readFile's context (spec
        // reads its files synchronously) and Node's argument parser (a plain command line is read without it).
        'NativeModule internal/abort_controller',
        'NativeModule internal/fs/read/context',
        'NativeModule internal/util/parse_args/parse_args',
      ])
        expect(loaded).not.toContain(unused);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('still ends on Ctrl-C while it waits on a FIFO named as a spec that nobody writes to', async () => {
    // Regular files are read synchronously; a FIFO is not, or a read that never completes would keep the SIGINT
    // handler from ever running. And the second Ctrl-C ends the process by the signal itself (a shell reports 130):
    // process.exit would wait for Node's thread pool, whose read of the FIFO never completes.
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-fifo-'));
    const fifo = join(dir, 'spec.allium');
    await execFileAsync('mkfifo', [fifo]);
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const child = spawn(LAUNCHER, ['spec', 'check', '--json', fifo], { stdio: ['ignore', 'pipe', 'pipe'] });
    const { code, signal, stderr } = await ctrlCTwiceWhileReading(child, fifo);
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGINT' });
    expect(stderr).toContain('cancelling');
  });

  it('hands a big report to a slow reader as it goes, holding none of it, and prints it whole', async () => {
    const spec = await bigReportSpec();
    const direct = await runNode([
      '--conditions=development',
      '--import',
      'tsx',
      specMain,
      'spec',
      'check',
      '--json',
      spec,
    ]);
    expect(direct.stdout.length).toBeGreaterThan(256 * 1024);
    // The reader sleeps first, so the pipe is full long before the report is written.
    const piped = await sh(`${entry} spec check --json "${spec}" | (sleep 1; cat)`);
    expect(piped.stdout).toBe(direct.stdout);
    expect(piped.stderr).toContain('held at most 0\n');
  });

  it('prints a big report whole into a socket whose reader waits', async () => {
    // A TCP socket as stdout, shared with this process, which made it non-blocking: once its buffers are full (about
    // 15 MB is more than a loopback connection's kernel buffers hold) a write answers EAGAIN, and the entry's
    // descriptor writer must wait and write the rest, and the entry must not end the process (exitOnceWritten)
    // before all of it is written.
    const spec = await bigReportSpec(30_000);
    const args = ['--conditions=development', '--import', 'tsx', specMain, 'spec', 'check', '--json', spec];
    const direct = await runNode(args);
    const run = await runIntoWaitingSocket(args, 1000);
    expect(run.code).toBe(direct.code);
    expect(run.received.toString('utf8')).toBe(direct.stdout);
  });

  it("ends quietly with the check's exit code when the reader stops early (| head -c 100)", async () => {
    const spec = await bigReportSpec();
    const head = await sh(`{ ${entry} spec check --json "${spec}"; echo "exit=$?" >&2; } | head -c 100`);
    expect(head.stdout.startsWith('{\n  "command": "check"')).toBe(true);
    expect(head.stderr).toContain('exit=1\n');
    expect(head.stderr).not.toMatch(/EPIPE|Error:|at .*\.[jt]s/);
  });
});

describe('the bin shim', () => {
  it('answers --version and -v itself, without loading the CLI, with the very text the CLI prints', async () => {
    // A copy of the shim beside a package.json and no dist/: only an answer that loads nothing else succeeds.
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-bin-'));
    await mkdir(join(dir, 'bin'));
    await copyFile(SHIM, join(dir, 'bin', 'allium-loop.js'));
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', version: '7.8.9' }));
    const bin = join(dir, 'bin', 'allium-loop.js');
    for (const flag of ['--version', '-v'])
      expect(await runNode([bin, flag])).toEqual({ code: 0, stdout: 'allium-loop 7.8.9\n', stderr: '' });
    // Anything else needs the CLI, which is missing here: the shim says how to build it.
    const help = await runNode([bin, '--help']);
    expect(help.code).toBe(1);
    expect(help.stderr).toContain('the CLI is not built yet');
    const both = await runNode([bin, '--version', '--help']);
    expect(both.stderr).toContain('the CLI is not built yet');

    const own = await runNode([SHIM, '--version']);
    const cli = await runMain('--version');
    expect(cli.code).toBe(0);
    expect(own).toEqual(cli);
  });

  it('loads the spec entry for `spec` and main for everything else', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-bin-'));
    await mkdir(join(dir, 'bin'));
    await mkdir(join(dir, 'dist'));
    await copyFile(SHIM, join(dir, 'bin', 'allium-loop.js'));
    await writeFile(join(dir, 'package.json'), JSON.stringify({ type: 'module', version: '7.8.9' }));
    // Stand-ins that say which entry ran, with what arguments.
    for (const [entry, file] of [
      ['main', 'main.js'],
      ['spec', 'spec-loader.cjs'],
    ])
      await writeFile(
        join(dir, 'dist', file as string),
        `process.stdout.write('${entry} ' + process.argv.slice(2).join(' '));\n`,
      );
    const bin = join(dir, 'bin', 'allium-loop.js');
    expect((await runNode([bin, 'spec', 'check', '--json', 'x.allium'])).stdout).toBe(
      'spec spec check --json x.allium',
    );
    expect((await runNode([bin, 'spec'])).stdout).toBe('spec spec');
    for (const args of [['run', 'spec'], ['--help'], ['status'], ['--', 'spec'], ['specs']])
      expect((await runNode([bin, ...args])).stdout).toBe(`main ${args.join(' ')}`);
    // A package without the spec entry says which file is missing.
    await rm(join(dir, 'dist', 'spec-loader.cjs'));
    const missing = await runNode([bin, 'spec', 'check']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('dist/spec-loader.cjs is missing');
  });
});

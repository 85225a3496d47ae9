import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ctrlCTwiceWhileReading } from './fifo.test-helpers.js';
import { runIntoWaitingSocket } from './socket-reader.test-helpers.js';

const execFileAsync = promisify(execFile);
const processIo = fileURLToPath(new URL('./process-io.ts', import.meta.url));
const MB4 = 4 * 1024 * 1024;

/** A child script that imports the process boundary, then runs `body`. */
async function childScript(body: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'allium-loop-process-io-'));
  const child = join(dir, 'child.mjs');
  await writeFile(
    child,
    [`const { runAsProcess } = await import(${JSON.stringify(processIo)});`, body].join('\n'),
  );
  return child;
}

/**
 * Runs a child whose `body` writes 4 MB to stdout in one call into a real pipe (a shell's `|`; Node's own child pipes
 * are socket pairs) whose reader sleeps before it reads; the body then says how much of it Node still held once the
 * call returned (`held N` on stderr).
 */
async function heldAfterOneWrite(body: string): Promise<{ held: number; delivered: number }> {
  const node = `"${process.execPath}" --conditions=development --import tsx "${await childScript(body)}"`;
  const { stdout, stderr } = await execFileAsync('sh', ['-c', `${node} | (sleep 1; wc -c)`]);
  return { held: Number(/held (\d+)/.exec(stderr)?.[1]), delivered: Number(stdout.trim()) };
}

/** A command that writes 4 MB in one call, then reports how much Node holds (built streams only: see below). */
const command = (options: string): string =>
  `const end = await runAsProcess(async (_argv, io) => { io.stdout('x'.repeat(${MB4})); return 0; }, ${options}); ` +
  `process.stderr.write(\`held \${end.outputPending() ? process.stdout.writableLength : 0}\\n\`);`;

describe('runAsProcess output', () => {
  it('by default goes through Node streams, which hold what a slow reader has not taken (run must not wait for it)', async () => {
    // A reader that stops reading must not stop the engine: writes return at once, and Node keeps the rest.
    const byDefault = await heldAfterOneWrite(command('{}'));
    expect(byDefault.held).toBeGreaterThan(MB4 / 2);
    expect(byDefault.delivered).toBe(MB4);
  });

  it('written to the descriptors (spec) holds nothing once a write returns, and arrives whole', async () => {
    expect(await heldAfterOneWrite(command("{ output: 'descriptors' }"))).toEqual({
      held: 0,
      delivered: MB4,
    });
  });

  it('written to the descriptors, still says output is pending when something wrote through a stream it built', async () => {
    // A Node warning, say, goes through process.stderr: the early exit (spec-main.ts) must then wait for it.
    const body =
      `const end = await runAsProcess(async () => { process.stdout.write('w'.repeat(${MB4})); return 0; }, ` +
      `{ output: 'descriptors' }); process.stderr.write(\`held \${end.outputPending() ? process.stdout.writableLength : -1}\\n\`);`;
    const built = await heldAfterOneWrite(body);
    expect(built.held).toBeGreaterThan(MB4 / 2);
    expect(built.delivered).toBe(MB4);
  });

  it('written to the descriptors into /dev/null, is no terminal and builds no stream', async () => {
    // Reads of process.stdout (the first builds the stream) counted by a getter wrapped around Node's own.
    const countReads =
      "let reads = 0; const own = Object.getOwnPropertyDescriptor(process, 'stdout'); " +
      'Object.defineProperty(process, "stdout", { ...own, get() { reads += 1; return own.get.call(process); } });';
    const child = await childScript(
      `${countReads} const end = await runAsProcess(async (_argv, io) => { io.stderr(\`tty \${io.isTTY}\\n\`); ` +
        `io.stdout('x'); return 0; }, { output: 'descriptors' }); ` +
        `process._rawDebug(\`pending \${end.outputPending()}, stdout read \${reads} times\`);`,
    );
    const node = `"${process.execPath}" --conditions=development --import tsx "${child}"`;
    const { stdout, stderr } = await execFileAsync('sh', ['-c', `${node} > /dev/null`]);
    expect({ stdout, stderr }).toEqual({
      stdout: '',
      stderr: 'tty false\npending false, stdout read 0 times\n',
    });
  });

  it('written to a non-blocking socket whose reader waits, waits for it and arrives whole', async () => {
    // A TCP socket as stdout, shared with the parent, whose end Node made non-blocking: a full socket answers EAGAIN.
    const child = await childScript(command("{ output: 'descriptors' }"));
    const run = await runIntoWaitingSocket(['--conditions=development', '--import', 'tsx', child], 500);
    expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: 'held 0\n' });
    expect(run.received.length).toBe(MB4);
  });

  it('written to the descriptors, ends quietly when the reader goes away, and the command carries on', async () => {
    const child = await childScript(
      `await runAsProcess(async (_argv, io) => { for (let i = 0; i < 64; i += 1) io.stdout('y'.repeat(65536)); ` +
        `io.stderr('carried on\\n'); return 3; }, { output: 'descriptors' });`,
    );
    const node = `"${process.execPath}" --conditions=development --import tsx "${child}"`;
    const { stdout, stderr } = await execFileAsync('sh', [
      '-c',
      `{ ${node}; echo "exit=$?" >&2; } | head -c 10`,
    ]);
    expect(stdout).toBe('y'.repeat(10));
    expect(stderr).toBe('carried on\nexit=3\n');
  });
});

describe('runAsProcess signals', () => {
  it('ends at the second Ctrl-C, its exit listeners run, while the thread pool is stuck in a read that never ends', async () => {
    // The command reads a FIFO that is open for writing but never written to: a thread of Node's pool waits in that
    // read for ever, and process.exit would wait for it. Its exit listener stands for the one that kills the agents'
    // process groups (agents/process-group.ts).
    const dir = await mkdtemp(join(tmpdir(), 'allium-loop-signals-'));
    const fifo = join(dir, 'never.fifo');
    const marker = join(dir, 'exit-listener-ran');
    await execFileAsync('mkfifo', [fifo]);
    const child = await childScript(
      `const { readFile, writeFileSync } = await import('node:fs');\n` +
        `process.once('exit', () => writeFileSync(${JSON.stringify(marker)}, 'ran'));\n` +
        `await runAsProcess(async () => { readFile(${JSON.stringify(fifo)}, () => {}); ` +
        `return new Promise(() => {}); }, { output: 'descriptors' });`,
    );
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const node = spawn(process.execPath, ['--conditions=development', '--import', 'tsx', child], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const { code, signal } = await ctrlCTwiceWhileReading(node, fifo);
    expect({ code, signal }).toEqual({ code: null, signal: 'SIGINT' });
    expect(await readFile(marker, 'utf8')).toBe('ran');
  });
});

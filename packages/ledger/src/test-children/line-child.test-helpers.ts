import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';

/** A child process that speaks in lines on stdin/stdout. */
export interface LineChild {
  readonly process: ChildProcessWithoutNullStreams;
  /** Resolves with the next stdout line (buffered lines first). Rejects if the child exits first. */
  nextLine(): Promise<string>;
  /** Writes one line to the child's stdin. */
  send(line: string): void;
  /** SIGKILLs the child (if still running) and waits for it to be reaped. */
  kill(): Promise<void>;
  /** Everything the child wrote to stderr so far. */
  stderr(): string;
}

/** Spawns `node <script> ...args` with the current Node binary and line-based plumbing. */
export function spawnLineChild(script: string, args: readonly string[]): LineChild {
  const child = spawn(process.execPath, [script, ...args], { stdio: 'pipe' });
  const buffered: string[] = [];
  const waiting: { resolve: (line: string) => void; reject: (error: Error) => void }[] = [];
  let partial = '';
  let errors = '';
  let exited = false;
  child.stdout.setEncoding('utf8');
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    errors += chunk;
  });
  child.stdout.on('data', (chunk: string) => {
    const parts = (partial + chunk).split('\n');
    partial = parts.pop() ?? '';
    for (const line of parts) {
      const waiter = waiting.shift();
      if (waiter === undefined) buffered.push(line);
      else waiter.resolve(line);
    }
  });
  child.stdin.on('error', () => undefined);
  child.on('exit', (code, signal) => {
    exited = true;
    for (const waiter of waiting.splice(0)) {
      waiter.reject(new Error(`child exited (${code ?? signal ?? '?'}) before answering; stderr: ${errors}`));
    }
  });
  return {
    process: child,
    nextLine: () => {
      const line = buffered.shift();
      if (line !== undefined) return Promise.resolve(line);
      if (exited) return Promise.reject(new Error(`child already exited; stderr: ${errors}`));
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    send: (line) => {
      child.stdin.write(`${line}\n`);
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exit = once(child, 'exit');
      child.kill('SIGKILL');
      await exit;
    },
    stderr: () => errors,
  };
}

import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, constants, openSync } from 'node:fs';
import { onTestFinished } from 'vitest';

/**
 * Presses Ctrl-C twice at `child`, a process that reads the FIFO `fifo` (or is about to): once the child has it open
 * to read (opening it to write without blocking succeeds only then), a writer holds it open and writes nothing, so
 * the child's read waits for ever; then SIGINT, and a second one once the child said it is cancelling. Resolves with
 * how the child ended and what it printed on stderr. However the test ends, the writer is closed and the child killed.
 */
export async function ctrlCTwiceWhileReading(
  child: ChildProcess,
  fifo: string,
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  let writer: number | undefined;
  onTestFinished(() => {
    if (writer !== undefined) closeSync(writer);
    child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let closed = false;
  const ended = (once(child, 'close') as Promise<[number | null, string | null]>).finally(
    () => (closed = true),
  );
  const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));
  while (writer === undefined && !closed) {
    try {
      writer = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO') throw error;
      await pause();
    }
  }
  child.kill('SIGINT');
  while (!stderr.includes('cancelling') && !closed) await pause();
  child.kill('SIGINT');
  const [code, signal] = await ended;
  return { code, signal, stderr };
}

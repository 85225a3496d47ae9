import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { type AddressInfo, connect, createServer } from 'node:net';

/** How a child ended that wrote into a socket (see {@link runIntoWaitingSocket}). */
export interface SocketRun {
  readonly code: number;
  /** Everything the reader received, once the child's end of the connection closed. */
  readonly received: Buffer;
  readonly stderr: string;
}

/**
 * Runs `node` with `args` and a TCP socket on loopback as its stdout, whose reader waits `waitMs` before reading
 * anything, so what the child writes piles up. The socket is this process's, which Node made non-blocking, and the
 * child shares it: once its buffers are full, a write there answers EAGAIN. Resolves once the child has exited and
 * the reader has all it wrote (the child holds the only other end, so the connection closes after its last byte).
 */
export async function runIntoWaitingSocket(args: readonly string[], waitMs: number): Promise<SocketRun> {
  const received: Buffer[] = [];
  let ended: () => void = () => undefined;
  const allRead = new Promise<void>((resolve) => (ended = resolve));
  const server = createServer((connection) => {
    connection.pause();
    setTimeout(() => connection.resume(), waitMs);
    connection.on('data', (chunk: Buffer) => received.push(chunk));
    connection.on('end', ended);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    await once(socket, 'connect');
    const child = spawn(process.execPath, args, { stdio: ['ignore', socket, 'pipe'] });
    socket.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const [code] = (await once(child, 'close')) as [number];
    await allRead;
    return { code, received: Buffer.concat(received), stderr };
  } finally {
    server.close();
  }
}

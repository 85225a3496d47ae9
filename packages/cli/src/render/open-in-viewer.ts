import { spawn } from 'node:child_process';

/** Opens a file in the system's default viewer (`open`, `xdg-open`, `start`); resolves false when none could start. */
export function openInViewer(path: string, platform: NodeJS.Platform = process.platform): Promise<boolean> {
  const [command, args] =
    platform === 'darwin'
      ? ['open', [path]]
      : platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', path]]
        : ['xdg-open', [path]];
  return new Promise((resolve) => {
    const child = spawn(command, args, { detached: true, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('spawn', () => {
      child.unref();
      resolve(true);
    });
  });
}

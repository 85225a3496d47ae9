import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';

/** A temp git repository with one commit holding `files`; returns its path. */
export async function makeGitRepo(files: Readonly<Record<string, string>>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'allium-loop-modes-'));
  await writeFiles(dir, files);
  const run = (args: string[]) => execa('git', args, { cwd: dir });
  await run(['init', '-q', '-b', 'main']);
  await run(['config', 'user.name', 'Test']);
  await run(['config', 'user.email', 'test@example.com']);
  await run(['add', '-A']);
  await run(['commit', '-q', '-m', 'initial']);
  return dir;
}

/** Writes files under `dir`, creating folders. */
export async function writeFiles(dir: string, files: Readonly<Record<string, string>>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), content);
  }
}

/** `git <args>` in `dir`, its stdout. */
export async function gitOut(dir: string, ...args: string[]): Promise<string> {
  return (await execa('git', args, { cwd: dir })).stdout;
}

// Times the hill-climb checkpoint primitives on a repository of realistic size, through the run's one git session
// (createGitSnapshots): a checkpoint (snapshot the working tree under refs/allium-loop/…), and a reverted tick as
// the verify mode runs it: openTick (snapshot before the agent's call), tickEdits (snapshot after it, the touched
// paths) and revertTick (only those paths back). Prints medians.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGitSnapshots, openTick, revertTick, tickEdits } from '@allium-loop/orchestrator';

const RUNS = 5;

function makeRepo(files: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-checkpoint-'));
  for (let i = 0; i < files; i += 1) {
    const folder = join(dir, 'src', `m${String(i % 50)}`);
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      join(folder, `f${String(i)}.ts`),
      `export const v${String(i)} = ${String(i)};\n`.repeat(20),
    );
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir });
  git('init', '-q', '-b', 'main');
  git('-c', 'user.name=b', '-c', 'user.email=b@b', 'add', '-A');
  git('-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-q', '-m', 'init');
  return dir;
}

function touch(dir: string, run: number): void {
  for (let i = 0; i < 100; i += 1)
    writeFileSync(join(dir, 'src', 'm1', `f${String(i * 50 + 1)}.ts`), `changed ${String(run)}\n`);
  for (let i = 0; i < 20; i += 1) writeFileSync(join(dir, `new-${String(run)}-${String(i)}.txt`), 'new\n');
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function bench(files: number): Promise<void> {
  const dir = makeRepo(files);
  const git = createGitSnapshots(dir, join(dir, '.allium-loop', 'bench', 'git-index'), {
    cover: 'repository',
  });
  const create: number[] = [];
  const tick: number[] = [];
  try {
    const best = await git.checkpoint('bench', 'best');
    for (let run = 0; run < RUNS; run += 1) {
      touch(dir, run);
      let started = performance.now();
      await git.checkpoint('bench', 'tick');
      create.push(performance.now() - started);
      started = performance.now();
      const open = await openTick(git, 'bench', run + 1, best!.object);
      const opened = performance.now() - started;
      touch(dir, run + RUNS);
      started = performance.now();
      const edits = await tickEdits(git, 'bench', open);
      await revertTick(git, 'bench', open, edits);
      tick.push(opened + performance.now() - started);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `${String(files)} files (100 edited, 20 new per tick): checkpoint median ${median(create).toFixed(0)} ms, a reverted tick (two snapshots + the agent's paths back) median ${median(tick).toFixed(0)} ms (${String(RUNS)} runs)`,
  );
}

for (const files of [500, 5000]) await bench(files);

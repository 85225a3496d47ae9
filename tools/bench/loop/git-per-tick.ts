// Times the git work one tick of the real loop does, on the bench's small project, to explain the engine overhead:
// `measure` hashes the working tree twice (gitWorkingTree: rev-parse + read-tree + add -A + write-tree, each) and
// reads HEAD once; the tick checkpoint hashes it a third time and adds commit-tree, rev-parse and update-ref —
// 16 git processes per tick. Also times one bare `git rev-parse HEAD` spawn, and the minimum (one tree hash plus
// the checkpoint's commit-tree and update-ref). Prints medians of RUNS ticks.
//
// Usage: node --conditions=development --import tsx tools/bench/loop/git-per-tick.ts
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gitCheckpoint, gitHead, gitWorkingTree } from '@allium-loop/orchestrator';

const RUNS = 9;

function makeRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-git-tick-'));
  const files: Record<string, string> = {
    'package.json': '{ "type": "module", "private": true }\n',
    'specs/tally.allium': '-- allium: 3\nentity Tally {\n    count: Integer\n}\n',
    'src/tally.js': 'export const closeTally = () => {};\n',
    'test/tally.test.js': "import { test } from 'node:test';\ntest('x', () => {});\n",
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...args], { cwd: dir });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  return dir;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

async function time(work: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await work();
  return performance.now() - started;
}

async function main(): Promise<void> {
  const dir = makeRepo();
  const tick: number[] = [];
  const single: number[] = [];
  const tree: number[] = [];
  try {
    for (let run = 0; run < RUNS; run += 1) {
      writeFileSync(join(dir, 'src', 'note.js'), `export const attempt = ${String(run)};\n`);
      single.push(await time(() => gitHead(dir)));
      tree.push(await time(() => gitWorkingTree(dir)));
      tick.push(
        await time(async () => {
          await gitWorkingTree(dir); // measure: treeHash
          await gitHead(dir); // measure: git.head
          await gitWorkingTree(dir); // measure: git.tree
          await gitCheckpoint(dir, 'bench', `tick-${String(run)}`); // checkpoint
        }),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `one git spawn (rev-parse HEAD) median ${median(single).toFixed(1)} ms; one working-tree hash (4 git processes) median ${median(tree).toFixed(1)} ms; a tick's git work (16 git processes) median ${median(tick).toFixed(1)} ms (${String(RUNS)} runs)`,
  );
}

await main();

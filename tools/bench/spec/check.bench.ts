/**
 * `spec check` against the reference's published figures (0.25 s at 50k lines, 0.57 s at 100k, 96 MB at 100k).
 *
 *   npx nx run allium-loop:build && node --conditions=development --import tsx tools/bench/spec/check.bench.ts
 *
 * For 50k and 100k generated lines it prints the median of RUNS runs of
 * - throughput: `checkReports` in this process (wall and CPU ms), start-up excluded;
 * - end to end: `node packages/cli/dist/main.js spec check --json big.allium` in a child (wall ms, CPU ms of the
 *   child, peak RSS from /usr/bin/time), which includes start-up;
 * - start-up alone: the same child running `--version`.
 * A benchmark, not a test; the machine is shared, so the load average is printed with the figures.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { checkReports } from '@allium-loop/allium';
import { generateSpec } from './generate-spec.js';

const RUNS = Number(process.env['RUNS'] ?? 5);
const CLI = resolve('packages/cli/dist/main.js');
const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

function child(args: string[]): { wall: number; cpu: number; rssMb: number } {
  const started = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', '%U %S %M', process.execPath, CLI, ...args], {
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  const wall = performance.now() - started;
  const last = run.stderr.trim().split('\n').pop() ?? '';
  const [user, system, rssKb] = last.split(' ').map(Number);
  return { wall, cpu: ((user ?? 0) + (system ?? 0)) * 1000, rssMb: (rssKb ?? 0) / 1024 };
}

const dir = mkdtempSync(join(tmpdir(), 'check-bench-'));
try {
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}; medians of ${RUNS} runs`,
  );
  const startup = Array.from({ length: RUNS }, () => child(['--version']));
  console.log(
    `start-up (--version): wall ${median(startup.map((s) => s.wall)).toFixed(0)} ms, cpu ${median(startup.map((s) => s.cpu)).toFixed(0)} ms, peak RSS ${median(startup.map((s) => s.rssMb)).toFixed(0)} MB`,
  );
  for (const size of [50_000, 100_000]) {
    const text = generateSpec(size);
    const file = join(dir, `big-${size}.allium`);
    writeFileSync(file, text);
    checkReports([{ path: 'warm.allium', text: generateSpec(2_000) }], 'check');
    const walls: number[] = [];
    const cpus: number[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      const cpu = process.cpuUsage();
      const started = performance.now();
      checkReports([{ path: file, text }], 'check');
      walls.push(performance.now() - started);
      const used = process.cpuUsage(cpu);
      cpus.push((used.user + used.system) / 1000);
    }
    const e2e = Array.from({ length: RUNS }, () => child(['spec', 'check', '--json', file]));
    console.log(
      `${String(size).padStart(7)} lines  in-process check: wall ${median(walls).toFixed(0)} ms, cpu ${median(cpus).toFixed(0)} ms  |  ` +
        `end to end: wall ${median(e2e.map((s) => s.wall)).toFixed(0)} ms, cpu ${median(e2e.map((s) => s.cpu)).toFixed(0)} ms, peak RSS ${median(e2e.map((s) => s.rssMb)).toFixed(0)} MB`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

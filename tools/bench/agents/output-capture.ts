// Benchmark: peak memory and time of runProcess while a child prints N MB, versus the bytes printed.
// Run: node --conditions=development --import tsx tools/bench/agents/output-capture.ts
import { tmpdir } from 'node:os';
import { DEFAULT_CAPTURE_LIMITS, runProcess } from '@allium-loop/agents';

const SIZES_MB = [50, 200];
const REPEATS = 3;

async function measure(mb: number): Promise<{ ms: number; peakRssDeltaMb: number }> {
  const script = `const b=Buffer.alloc(1<<16,97);b[b.length-1]=10;let n=${mb}*16;const w=()=>{while(n-->0){if(!process.stdout.write(b))return process.stdout.once('drain',w)}};w()`;
  global.gc?.();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10);
  let lines = 0;
  const result = await runProcess({
    file: process.execPath,
    args: ['-e', script],
    cwd: tmpdir(),
    env: { PATH: process.env['PATH'] ?? '' },
    timeoutMs: 120_000,
    killGraceMs: 1_000,
    capture: DEFAULT_CAPTURE_LIMITS,
    onStdoutLine: () => (lines += 1),
  });
  clearInterval(sampler);
  if (result.stdout.totalBytes !== mb * 1024 * 1024)
    throw new Error(`expected ${mb} MB, got ${result.stdout.totalBytes}`);
  return { ms: result.durationMs, peakRssDeltaMb: (peak - base) / 1024 / 1024 };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const mb of SIZES_MB) {
  const runs = [];
  for (let i = 0; i < REPEATS; i += 1) runs.push(await measure(mb));
  console.log(
    `${mb} MB of stdout: median ${median(runs.map((r) => r.ms))} ms, median peak RSS growth ${median(runs.map((r) => r.peakRssDeltaMb)).toFixed(1)} MB (${REPEATS} runs)`,
  );
}

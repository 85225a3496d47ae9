import { analyzeSpecs, parseSpec } from '@allium-loop/allium';
import { generateSpec } from './generate-spec.js';

const SIZES = [10_000, 50_000, 100_000];
const RUNS = 7;
// With `--expose-gc` every run starts from a collected heap, so the peak RSS is one analysis's, not the garbage of the
// runs before it that V8 had not collected yet (at 100k lines: about 235 MB against 356 MB without).
const collect = (globalThis as { gc?: () => void }).gc;

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

function measure(text: string, run: (text: string) => unknown): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i += 1) {
    collect?.();
    const started = performance.now();
    run(text);
    times.push(performance.now() - started);
  }
  return median(times);
}

const results: Record<number, { parse: number; full: number }> = {};
let peakRss = process.memoryUsage().rss;
for (const size of SIZES) {
  const text = generateSpec(size);
  analyzeSpecs([{ path: 'warm.allium', text: generateSpec(2_000) }]);
  const parse = measure(text, (t) => parseSpec(t, 'big.allium'));
  const full = measure(text, (t) => {
    const analysis = analyzeSpecs([{ path: 'big.allium', text: t }]);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    return analysis;
  });
  results[size] = { parse, full };
  const analysis = analyzeSpecs([{ path: 'big.allium', text }]);
  console.log(
    `${String(size).padStart(7)} lines  parse ${parse.toFixed(0).padStart(5)} ms  parse+diagnostics+graph ${full.toFixed(0).padStart(5)} ms  ` +
      `(${analysis.rules.length} rules, ${analysis.graph.nodes.length} nodes, ${analysis.graph.edges.length} edges, ${analysis.diagnostics.length} diagnostics)`,
  );
}
const r50 = results[50_000]?.full ?? 0;
const r100 = results[100_000]?.full ?? 0;
console.log(`time(100k)/time(50k) = ${(r100 / r50).toFixed(2)} (target ≤ 2.2); 100k target < 1000 ms`);
console.log(
  `peak RSS ${(peakRss / 1024 / 1024).toFixed(0)} MB (target < 300 MB; ${collect === undefined ? 'no collection between runs: run with --expose-gc' : 'heap collected before each run'}); medians of ${RUNS} runs`,
);

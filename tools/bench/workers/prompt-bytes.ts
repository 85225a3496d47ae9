// Prompt size per slice vs whole spec, and the cost of prompt assembly and of the guards.
// Run: node --conditions=development --import tsx tools/bench/workers/prompt-bytes.ts
import {
  assemblePrompt,
  createSpecReader,
  detectViolations,
  sha256,
  type PhaseContext,
  type WorkspaceSnapshot,
} from '@allium-loop/workers';

function chainSpec(n: number): string {
  const blocks = ['-- allium: 3', '-- Scope: generated chains (benchmark)', ''];
  for (let i = 0; i < n; i += 1) {
    blocks.push(
      `entity Thing${i} {\n    label: String\n    size: Size${i}\n    status: fresh | done\n}\n`,
      `enum Size${i} { small | large }\n`,
      `rule Finish${i} {\n    when: FinishRequested${i}(thing)\n    requires: thing.status = fresh\n    ensures:\n        thing.status = done\n        Finished${i}(thing: thing)\n}\n`,
      `rule Announce${i} {\n    when: Finished${i}(thing)\n    ensures: Note${i}.created(thing: thing)\n}\n`,
      `entity Note${i} {\n    thing: Thing${i}\n}\n`,
      `surface Panel${i} {\n    context thing: Thing${i}\n    provides:\n        FinishRequested${i}(thing)\n}\n`,
    );
  }
  blocks.push('config {\n    batch: Integer = 10\n}\n');
  return blocks.join('\n');
}

const context: PhaseContext = {
  cwd: '/project',
  slug: 'bench',
  tick: 1,
  goal: 'Finish things and announce them',
  mode: 'spec-first',
  paths: { spec: ['spec/chains.allium'], tests: [], code: ['src/'] },
  parkedQuestions: [],
  timeoutMs: 60_000,
};

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function time(runs: number, fn: () => void): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const started = performance.now();
    fn();
    samples.push(performance.now() - started);
  }
  return median(samples);
}

const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

for (const n of [10, 100]) {
  const sources = [{ path: 'spec/chains.allium', text: chainSpec(n) }];
  const { graph } = createSpecReader().read(sources);
  const spec = { sources, graph };
  const slice = { name: 'chain 4', constructs: ['rule:Finish4'] };
  const whole = assemblePrompt('propagate', context, spec);
  const one = assemblePrompt('propagate', { ...context, slice }, spec);
  const wholeMs = time(30, () => assemblePrompt('propagate', context, spec));
  const sliceMs = time(30, () => assemblePrompt('propagate', { ...context, slice }, spec));
  console.log(
    `${n} slices: spec excerpt ${bytes(whole.excerpt.text)} B whole vs ${bytes(one.excerpt.text)} B one slice; ` +
      `prompt ${bytes(whole.prompt)} B vs ${bytes(one.prompt)} B; ` +
      `assembly median ${wholeMs.toFixed(2)} ms vs ${sliceMs.toFixed(2)} ms`,
  );
}

const testText = (i: number) =>
  `import { it, expect } from 'vitest';\nit('Rule${i}: works', () => { expect(${i}).toBe(${i}); });\n`.repeat(
    20,
  );
const files = (change: boolean) =>
  new Map(
    Array.from({ length: 500 }, (_, i) => {
      const text = change && i % 50 === 0 ? `${testText(i)}it.skip('x', () => {});\n` : testText(i);
      return [`test/t${i}.test.ts`, { text, sha256: sha256(text) }] as const;
    }),
  );
const specText = chainSpec(100);
const spec = new Map([['spec/chains.allium', { text: specText, sha256: sha256(specText) }]]);
const before: WorkspaceSnapshot = { spec, tests: files(false) };
const after: WorkspaceSnapshot = { spec, tests: files(true) };
const protectedTests = [...before.tests].map(([path, f]) => ({
  path,
  sha256: f.sha256,
  storedCopy: `bench/protected/${path}`,
  recordedAtTick: 1,
}));
let found = 0;
const guardMs = time(30, () => {
  found = detectViolations({ phase: 'implement', before, after, protectedTests, removedConstructs: [] })
    .violations.length;
});
console.log(
  `guards over 500 test files (10 changed with a new .skip) + a 100-chain spec: ${found} violations, median ${guardMs.toFixed(2)} ms`,
);

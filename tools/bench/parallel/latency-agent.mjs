#!/usr/bin/env node
// The bench's agent, run by the `command` adapter: every call waits <latencyMs>, then answers by phase and slice
// (the slice is read from the result file's path, `…/slices/<key>/…`), never by call order, so slices may run in
// any interleaving:
//   node latency-agent.mjs <latencyMs> <spec file> {phase} {result_file}
// tend copies <spec file> to specs/things.allium; a slice's propagate writes its failing test, implement its code,
// weed is clean; the integration pass (or an unsplit goal) writes one test that passes.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const [latency, specFile, phase, resultFile] = process.argv.slice(2);
await new Promise((resolve) => setTimeout(resolve, Number(latency)));
const write = (path, text) => {
  mkdirSync(dirname(join(process.cwd(), path)), { recursive: true });
  writeFileSync(join(process.cwd(), path), text);
};
const result = (value) => writeFileSync(resultFile, `${JSON.stringify(value, null, 2)}\n`);
const key = /\/slices\/([^/]+)\//.exec(resultFile)?.[1];
const slice = key !== undefined && key !== 'integration' ? key : undefined;
const fn = (k) => k.replace(/[^A-Za-z0-9]/g, '_');

if (phase === 'tend') {
  write('specs/things.allium', readFileSync(specFile, 'utf8'));
  result({ phase: 'tend', specFiles: ['specs/things.allium'], openQuestions: [], summary: 'things' });
} else if (phase === 'propagate' && slice !== undefined) {
  const path = `test/${slice}.test.js`;
  write(
    path,
    `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ${fn(slice)} } from '../src/${slice}.js';
test('${slice} works', () => assert.equal(${fn(slice)}(), 'done'));
`,
  );
  result({ phase: 'propagate', testFiles: [{ path, covers: [slice] }], summary: slice });
} else if (phase === 'propagate') {
  write(
    'test/integration.test.js',
    `import assert from 'node:assert/strict';
import { test } from 'node:test';
test('together', () => assert.ok(true));
`,
  );
  result({
    phase: 'propagate',
    testFiles: [{ path: 'test/integration.test.js', covers: ['together'] }],
    summary: 'together',
  });
} else if (phase === 'implement' && slice !== undefined) {
  write(`src/${slice}.js`, `export function ${fn(slice)}() { return 'done'; }\n`);
  result({ phase: 'implement', filesChanged: [`src/${slice}.js`], contestedTests: [], summary: slice });
} else if (phase === 'implement') {
  result({ phase: 'implement', filesChanged: [], contestedTests: [], summary: 'nothing to do' });
} else if (phase === 'weed') {
  result({ phase: 'weed', clean: true, divergences: [], summary: 'clean' });
} else {
  process.stderr.write(`latency-agent: no answer for phase ${phase}\n`);
  process.exit(3);
}

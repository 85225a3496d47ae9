#!/usr/bin/env node
// The bench's agent, run by the `command` adapter: every call waits <latencyMs> (a timer: it waits, it does not
// burn CPU), then answers by phase and slice (the slice is read from the result file's path, `…/slices/<key>/…`),
// never by call order, so slices may run in any interleaving:
//   node latency-agent.mjs <latencyMs> <spec file> {phase} {result_file}
// tend copies <spec file> to specs/things.allium; a slice's propagate writes its failing test (an upstream
// propagate record, naming the slice's rule and entity so the witness's coverage counts them), implement its code,
// weed is clean; the integration pass writes one test over every rule and entity of the spec.
import { readFileSync } from 'node:fs';
import { agentRecords } from '../../../packages/cli/src/reliability/fixtures/agent-records.mjs';

const [latency, specFile, phase, resultFile] = process.argv.slice(2);
await new Promise((resolve) => setTimeout(resolve, Number(latency)));

const spec = readFileSync(specFile, 'utf8');
const { write, result, propagated } = agentRecords(resultFile);

const key = /\/slices\/([^/]+)\//.exec(resultFile)?.[1];
// The slice's entity is the last word of its key (`cycle-entity-lifecycle-Lamp`); Tally's rule is CountStarted.
const entity = key === undefined || key === 'integration' ? undefined : /-([A-Za-z]+)$/.exec(key)?.[1];
const rule = entity === undefined ? undefined : entity === 'Tally' ? 'CountStarted' : `Start${entity}`;
const fn = entity === undefined ? undefined : `make${entity}`;

if (phase === 'tend') {
  write('specs/things.allium', spec);
  result({ phase: 'tend', spec_path: 'specs/things.allium', open_questions: [], summary: 'things' });
} else if (phase === 'propagate' && entity !== undefined) {
  const path = `test/${entity.toLowerCase()}.test.js`;
  write(
    path,
    `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ${fn} } from '../src/${entity.toLowerCase()}.js';
test('${rule} makes a ${entity}', () => assert.equal(${fn}().kind, '${entity}'));
`,
  );
  propagated({ [path]: [rule, entity] }, rule);
} else if (phase === 'propagate') {
  const names = [...spec.matchAll(/^(?:entity|rule) (\w+)/gm)].map((m) => m[1]);
  write(
    'test/integration.test.js',
    `import assert from 'node:assert/strict';
import { test } from 'node:test';
test('${names.join(', ')} together', () => assert.ok(true));
`,
  );
  propagated({ 'test/integration.test.js': names }, 'together');
} else if (phase === 'implement' && entity !== undefined) {
  const path = `src/${entity.toLowerCase()}.js`;
  write(path, `export function ${fn}() { return { kind: '${entity}' }; }\n`);
  result({ phase: 'implement', files_changed: [path], contested_tests: [], summary: rule });
} else if (phase === 'implement') {
  result({ phase: 'implement', files_changed: [], contested_tests: [], summary: 'nothing to do' });
} else if (phase === 'weed') {
  result({ phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' });
} else {
  process.stderr.write(`latency-agent: no answer for phase ${phase}\n`);
  process.exit(3);
}

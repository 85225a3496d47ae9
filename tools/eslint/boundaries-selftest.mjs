// Proves the module-boundary rule fires: lints deliberately bad sources placed (virtually) inside packages and
// expects each to be rejected, and a good one to pass. Also checks the package dependency graph has no cycle.
// Run by `npm run lint` and so by CI; exits 1 on any surprise.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const fixtures = join(root, 'tools/eslint/fixtures');
const eslint = new ESLint({ cwd: root });

const cases = [
  { fixture: 'pure-imports-fs.ts', as: 'packages/evaluator/src/__selftest__.ts', expect: /is effectful/ },
  {
    fixture: 'pure-imports-child-process.ts',
    as: 'packages/allium/src/__selftest__.ts',
    expect: /is effectful/,
  },
  { fixture: 'pure-imports-execa.ts', as: 'packages/decomposer/src/__selftest__.ts', expect: /is effectful/ },
  {
    fixture: 'core-imports-adapter.ts',
    as: 'packages/entry/src/__selftest__.ts',
    expect: /dependencies point downward only/,
  },
  {
    fixture: 'adapter-imports-app.ts',
    as: 'packages/ledger/src/__selftest__.ts',
    expect: /dependencies point downward only/,
  },
  { fixture: 'deep-import.ts', as: 'packages/cli/src/__selftest__.ts', expect: /Deep import/ },
  {
    fixture: 'production-imports-testing.ts',
    as: 'packages/cli/src/__selftest__.ts',
    expect: /is test infrastructure/,
  },
  { fixture: 'good.ts', as: 'packages/entry/src/__selftest__.ts', expect: null },
];

let failures = 0;
for (const testCase of cases) {
  const text = readFileSync(join(fixtures, testCase.fixture), 'utf8');
  const [result] = await eslint.lintText(text, { filePath: join(root, testCase.as) });
  const messages = result.messages.filter((m) => m.ruleId === 'allium-loop/module-boundaries' || m.fatal);
  const hit = messages.some((m) => testCase.expect?.test(m.message));
  const ok = testCase.expect === null ? messages.length === 0 : hit;
  if (!ok) failures += 1;
  console.log(
    `${ok ? 'ok  ' : 'FAIL'} ${testCase.fixture} as ${testCase.as}: ${messages.map((m) => m.message).join(' | ') || 'no boundary errors'}`,
  );
}

// The internal dependency graph must be acyclic.
const deps = new Map();
for (const dir of readdirSync(join(root, 'packages'))) {
  const pkg = JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8'));
  deps.set(
    pkg.name,
    Object.keys(pkg.dependencies ?? {}).filter((d) => d.startsWith('@allium-loop/') || d === 'allium-loop'),
  );
}
const state = new Map();
const visit = (name, path) => {
  if (state.get(name) === 'done') return;
  if (state.get(name) === 'open')
    throw new Error(`package dependency cycle: ${[...path, name].join(' -> ')}`);
  state.set(name, 'open');
  for (const dep of deps.get(name) ?? []) visit(dep, [...path, name]);
  state.set(name, 'done');
};
try {
  for (const name of deps.keys()) visit(name, []);
  console.log(`ok   package graph: ${deps.size} packages, no cycle`);
} catch (error) {
  failures += 1;
  console.log(`FAIL ${error.message}`);
}

if (failures > 0) {
  console.error(`boundaries self-test: ${failures} failure(s)`);
  process.exit(1);
}
console.log('boundaries self-test: the rule fires on every bad fixture');

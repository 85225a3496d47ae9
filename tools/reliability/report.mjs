#!/usr/bin/env node
// Regenerates the table in docs/reliability.md from a run of the reliability suite.
//
//   node tools/reliability/report.mjs            run the suite (50 kills), then rewrite the table
//   node tools/reliability/report.mjs --no-run   rewrite the table from the last run's files
//
// The suite is packages/cli/src/reliability/** plus the two e2e files that cover the first items. Each test
// appends its figure to packages/cli/reliability-results.ndjson; vitest's JSON report gives pass/fail and time.
// RELIABILITY_KILLS (default 50 here) and RELIABILITY_SEED are passed through to the kill-and-resume test.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = join(ROOT, 'packages', 'cli');
const FIGURES = join(CLI, 'reliability-results.ndjson');
const REPORT = join(CLI, 'reliability-vitest.json');
const DOC = join(ROOT, 'docs', 'reliability.md');
const START = '<!-- reliability-table:start -->';
const END = '<!-- reliability-table:end -->';
const FILES = ['src/reliability', 'src/e2e/terminal-states.test.ts', 'src/e2e/loop-flows.test.ts'];

/** The table's rows: the issue's item, the failure mode, the test (file and a unique part of its name), figures. */
const ROWS = [
  [
    1,
    'an agent that always wants another iteration',
    'e2e/terminal-states',
    'max_ticks: stops at exactly',
    [],
  ],
  [
    2,
    'a verifier that never accepts (unchanged fingerprint)',
    'e2e/terminal-states',
    'no_progress: an unchanged',
    [],
  ],
  [3, 'a test command that hangs', 'reliability/process-safety', 'a hanging test command', ['hanging-tests']],
  [3, 'an agent that hangs', 'reliability/process-safety', 'a hanging agent', ['hanging-agent']],
  [4, 'budget at the boundary and one cent less', 'e2e/terminal-states', 'budget_exhausted', []],
  [
    5,
    'kill -9 of the supervisor at random moments, then resume',
    'reliability/kill-resume',
    'kills across runs',
    ['kill-resume'],
  ],
  [5, 'kill -9 mid-call, orphaned agent', 'e2e/loop-flows', 'kill -9 of the supervisor mid-call', []],
  [
    6,
    'a stop after the last result, before the verdict',
    'reliability/process-safety',
    'a stop after the last phase',
    ['stop-before-verdict'],
  ],
  [
    7,
    'two supervisors on one goal; a stale lease',
    'reliability/process-safety',
    'two supervisors on one goal',
    ['two-supervisors'],
  ],
  [8, 'a corrupt ledger: truncated', 'reliability/corrupt-ledger', 'truncated:', ['corrupt-truncated']],
  [
    8,
    'a corrupt ledger: invalid JSON',
    'reliability/corrupt-ledger',
    'invalid JSON:',
    ['corrupt-invalid-JSON'],
  ],
  [
    8,
    'a corrupt ledger: schema-invalid',
    'reliability/corrupt-ledger',
    'schema-invalid:',
    ['corrupt-schema-invalid'],
  ],
  [9, 'an agent adds `.skip`', 'reliability/cheats', 'adds .skip', ['cheat-skip']],
  [9, 'an agent deletes a spec rule', 'reliability/cheats', 'deletes a spec rule', ['cheat-rule']],
  [9, 'an agent adds `-- allium-ignore`', 'reliability/cheats', 'adds -- allium-ignore', ['cheat-ignore']],
  [9, 'an agent weakens a protected test', 'reliability/cheats', 'weakens a protected', ['cheat-protected']],
  [
    10,
    'a result claiming success while tests fail',
    'reliability/cheats',
    'claiming success',
    ['false-success'],
  ],
  [
    10,
    'a result naming files that do not exist',
    'reliability/cheats',
    'naming files that do not exist',
    ['ghost-files'],
  ],
  [
    '14.1',
    'an agent rewrites a user-written test to assert nothing',
    'reliability/cheats',
    'assert nothing',
    ['cheat-hollow-user-test'],
  ],
  [
    '14.2',
    'an agent edits the npm `test` script to print a pass',
    'reliability/cheats',
    'npm test script',
    ['cheat-npm-test-script'],
  ],
  [
    '14.2',
    'an agent edits `testCommand`; `verify` on the forgery',
    'reliability/cheats',
    'testCommand in allium-loop.yaml',
    ['cheat-test-command'],
  ],
  [
    '14.3',
    'verify mode: a module the check imports',
    'reliability/cheats',
    'a module the check imports',
    ['cheat-verify-import'],
  ],
  [
    '14.3',
    'verify mode: the Makefile behind `make check`',
    'reliability/cheats',
    'the Makefile behind',
    ['cheat-verify-makefile'],
  ],
  [
    '14.3',
    'verify mode: the file behind an npm script',
    'reliability/cheats',
    'the file behind an npm script',
    ['cheat-verify-npm-script-file'],
  ],
  [
    '14.3',
    'verify mode: a sourced shell file',
    'reliability/cheats',
    'a sourced shell file',
    ['cheat-verify-sourced'],
  ],
  [
    '14.3',
    'verify mode: a binary through a relative PATH entry',
    'reliability/cheats',
    'relative PATH entry',
    ['cheat-verify-path-binary'],
  ],
  [
    '14.4',
    'a Python test that fails to import; then `assert True`',
    'reliability/cheats',
    'fails to import',
    ['cheat-python-import'],
  ],
  [
    '14.5',
    '`{ todo: true }` and lint/type/coverage suppressions',
    'reliability/cheats',
    '{ todo: true }',
    ['cheat-todo-suppressions'],
  ],
  [
    '14.13',
    "hill-climb revert: the engine's redirected output and the verify log",
    'reliability/hill-climb',
    "touches only the agent's paths",
    ['hill-climb-revert-scope'],
  ],
  [
    '14.14',
    'hill-climb: kill -9 inside a tick, a new commit, resume',
    'reliability/hill-climb',
    'kill -9 inside a tick',
    ['hill-climb-kill'],
  ],
  [
    '14.14',
    'hill-climb: kill -9 at random moments, then resume',
    'reliability/hill-climb',
    'at random moments of a hill-climb run',
    ['hill-climb-kills'],
  ],
  [
    '14.15',
    'hill-climb: an agent moves the `best` ref to a forged commit',
    'reliability/hill-climb',
    'moves refs/allium-loop',
    ['hill-climb-best-ref'],
  ],
  [
    11,
    'secrets in the environment and agent output',
    'reliability/hostile-input',
    'API-key-shaped',
    ['secrets'],
  ],
  [
    12,
    'shell metacharacters in the goal',
    'reliability/hostile-input',
    'shell metacharacters',
    ['shell-metacharacters'],
  ],
  [12, 'a goal of 10,000 characters', 'reliability/hostile-input', '10,000 characters', ['long-goal']],
  [
    12,
    'unknown flag, missing spec path, malformed YAML',
    'reliability/hostile-input',
    'bad input:',
    ['bad-input'],
  ],
  [12, 'Ctrl-C, malformed config, bad cap values', 'e2e/terminal-states', 'cancelled: SIGINT', []],
];

function runSuite() {
  rmSync(FIGURES, { force: true });
  rmSync(REPORT, { force: true });
  const began = Date.now();
  const result = spawnSync(
    'npx',
    ['vitest', 'run', ...FILES, '--reporter=default', '--reporter=json', `--outputFile.json=${REPORT}`],
    {
      cwd: CLI,
      stdio: 'inherit',
      env: { ...process.env, FORCE_COLOR: '0', RELIABILITY_KILLS: process.env.RELIABILITY_KILLS ?? '50' },
    },
  );
  return { code: result.status ?? 1, seconds: (Date.now() - began) / 1000 };
}

function readTests() {
  if (!existsSync(REPORT)) throw new Error(`no vitest report at ${REPORT}: run without --no-run first`);
  const report = JSON.parse(readFileSync(REPORT, 'utf8'));
  return report.testResults.flatMap((file) =>
    file.assertionResults.map((test) => ({
      file: file.name.replace(/^.*\/src\//, '').replace(/\.test\.ts$/, ''),
      title: test.title,
      status: test.status,
      seconds: (test.duration ?? 0) / 1000,
    })),
  );
}

function readFigures() {
  if (!existsSync(FIGURES)) return new Map();
  const lines = readFileSync(FIGURES, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '');
  return new Map(lines.map((line) => JSON.parse(line)).map((entry) => [entry.id, entry.figure]));
}

function renderTable(tests, figures, when) {
  const lines = ['| # | failure mode | test (file › name) | last run |', '| --- | --- | --- | --- |'];
  for (const [item, mode, file, part, ids] of ROWS) {
    const test = tests.find((t) => t.file === file && t.title.includes(part));
    const status = test === undefined ? 'not run' : `${test.status} in ${test.seconds.toFixed(0)} s`;
    const figure = ids
      .map((id) => figures.get(id))
      .filter((f) => f !== undefined)
      .join('; ');
    const name = test === undefined ? part : test.title;
    const cell = (text) => text.replace(/\|/g, '\\|');
    lines.push(
      `| ${item} | ${cell(mode)} | \`${file}\` › ${cell(name)} | ${cell(figure === '' ? status : `${status}: ${figure}`)} |`,
    );
  }
  const passed = tests.filter((t) => t.status === 'passed').length;
  lines.push('', `Last run: ${when}; ${passed}/${tests.length} tests passed.`);
  return lines.join('\n');
}

const noRun = process.argv.includes('--no-run');
const run = noRun ? undefined : runSuite();
const tests = readTests();
const when =
  run === undefined
    ? 'from the stored results'
    : `${new Date().toISOString().slice(0, 16)}Z, ${run.seconds.toFixed(0)} s wall clock`;
const table = renderTable(tests, readFigures(), when);
const doc = readFileSync(DOC, 'utf8');
const start = doc.indexOf(START);
const end = doc.indexOf(END);
if (start < 0 || end < start) throw new Error(`${DOC} lacks the ${START} … ${END} markers`);
writeFileSync(DOC, `${doc.slice(0, start + START.length)}\n${table}\n${doc.slice(end)}`);
console.log(`reliability: wrote the table of ${String(ROWS.length)} rows to docs/reliability.md`);
process.exitCode = run?.code ?? 0;

// Writes the committed fixture ledgers of `release-ledgers.test.ts`: one run of each loop kind (spec loop,
// --verify, --stories, --state-file), made by the BUILT CLI of a release and killed with SIGKILL in the middle of
// an agent call, so the ledger holds a pending intent. The project files (without .git and the lease) are kept,
// with the temporary directory's path replaced by __PROJECT__.
//
//   npx nx run-many -t build && node --conditions=development --import tsx \
//     packages/orchestrator/test-fixtures/release-ledgers/generate.ts [--cli packages/cli/dist/main.js]
//
// Re-run only to add fixtures of a NEW release next to the old ones; never overwrite a released fixture.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '../../../..');
const cliArg = process.argv.indexOf('--cli');
const cli = resolve(root, cliArg > 0 ? process.argv[cliArg + 1]! : 'packages/cli/dist/main.js');
const release = JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8')).version as string;
const planAgent = join(root, 'packages/cli/src/reliability/fixtures/plan-agent.mjs');

const TALLY = {
  'package.json': '{ "type": "module", "private": true }\n',
  'allium-loop.yaml': 'testCommand: node test/check.mjs\n',
  'specs/tally.allium': `-- allium: 3
entity Tally {
    count: Integer
    status: open | closed
}

rule CloseTally {
    when: CloseRequested(tally)
    requires: tally.status = open
    ensures: tally.status = closed
}
`,
  'src/tally.js': 'export function closeTally(t) { return t; }\n',
  'test/check.mjs': `import { readFileSync } from 'node:fs';
const ok = readFileSync(new URL('../src/tally.js', import.meta.url), 'utf8').includes("'closed'; }");
console.log(ok ? 'ok 1 - closes' : 'not ok 1 - closes');
console.log('1..1');
console.log(ok ? '# pass 1' : '# pass 0');
console.log(ok ? '# fail 0' : '# fail 1');
`,
};
const FIXED =
  "export function closeTally(t) { if (t.status !== 'open') throw new Error('closed'); t.status = 'closed'; }\n";
const DIRTY_WEED = {
  phase: 'weed',
  clean: false,
  divergences: [
    {
      construct: 'rule:CloseTally',
      spec: { file: 'specs/tally.allium', line: 7 },
      code: { file: 'src/tally.js', line: 1 },
      classification: 'code-bug',
      description: 'closeTally does not close the tally',
    },
  ],
  summary: 'one divergence',
};
const PRD = {
  project: 'demo',
  userStories: [
    {
      id: 'US-1',
      title: 'Export as CSV',
      priority: 1,
      passes: false,
      acceptanceCriteria: ['a CSV file is written'],
    },
  ],
};

interface Kind {
  readonly name: string;
  readonly files: Record<string, string>;
  readonly plan: Record<string, unknown[]>;
  readonly args: (agent: string) => string[];
}

const KINDS: Kind[] = [
  {
    name: 'spec',
    files: TALLY,
    plan: {
      weed: [{ result: DIRTY_WEED }],
      // The implement call writes its fix and its result, then kills the supervisor: resume reconciles it.
      implement: [
        {
          write: { 'src/tally.js': FIXED },
          result: {
            phase: 'implement',
            filesChanged: ['src/tally.js'],
            contestedTests: [],
            summary: 'fixed',
          },
          killParent: true,
        },
      ],
    },
    args: (agent) => [
      'run',
      'make the code match the spec again',
      '--max-ticks',
      '4',
      '--agent',
      'command',
      '--agent-command',
      agent,
    ],
  },
  {
    name: 'verify',
    files: { 'README.md': 'x\n' },
    plan: {
      step: [{ write: { 'notes.txt': 'thinking\n' } }, { write: { 'half.txt': 'half\n' }, killParent: true }],
    },
    args: (agent) => [
      'run',
      'make done.txt',
      '--verify',
      'test -f done.txt',
      '--max-ticks',
      '5',
      '--agent-command',
      agent,
    ],
  },
  {
    name: 'stories',
    files: { 'prd.json': `${JSON.stringify(PRD, null, 2)}\n` },
    plan: { generate: [{ write: { 'export.csv': 'id,amount\n' }, killParent: true }] },
    args: (agent) => ['run', '--stories', 'prd.json', '--max-ticks', '5', '--agent-command', agent],
  },
  {
    name: 'state-file',
    files: { 'README.md': 'x\n' },
    plan: { step: [{ write: { 'notes.txt': 'started\n' }, killParent: true }] },
    args: (agent) => [
      'run',
      'list the three primary colours',
      '--state-file',
      '--max-ticks',
      '5',
      '--agent-command',
      agent,
    ],
  },
];

function listFiles(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === '.git') return [];
    return statSync(path).isDirectory() ? listFiles(path, base) : [relative(base, path)];
  });
}

for (const kind of KINDS) {
  const cwd = mkdtempSync(join(tmpdir(), `release-ledger-${kind.name}-`));
  const planDir = mkdtempSync(join(tmpdir(), `release-ledger-plan-`));
  const plan = join(planDir, 'plan.json');
  writeFileSync(plan, JSON.stringify(kind.plan));
  for (const [path, text] of Object.entries(kind.files)) {
    mkdirSync(dirname(join(cwd, path)), { recursive: true });
    writeFileSync(join(cwd, path), text);
  }
  const git = (...args: string[]) => execFileSync('git', args, { cwd, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'initial');
  const agent = `node ${planAgent} ${plan} {phase} {result_file}`;
  const run = spawnSync(process.execPath, [cli, ...kind.args(agent)], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'] },
    timeout: 300_000,
  });
  if (run.signal !== 'SIGKILL')
    throw new Error(
      `${kind.name}: expected a SIGKILL, got ${String(run.status)} ${run.stdout} ${run.stderr}`,
    );
  const out = join(here, release, kind.name);
  rmSync(out, { recursive: true, force: true });
  for (const file of listFiles(cwd)) {
    if (file.endsWith('.lock')) continue;
    // Dot names are stored as `dot-…`: the fixture's own .gitignore (and this repository's) would hide them.
    const stored = file.replace(/(^|\/)\./g, '$1dot-');
    mkdirSync(dirname(join(out, stored)), { recursive: true });
    const text = readFileSync(join(cwd, file), 'utf8')
      .replaceAll(cwd, '__PROJECT__')
      .replaceAll(plan, '__PLAN__')
      .replaceAll(planAgent, '__PLAN_AGENT__');
    writeFileSync(join(out, stored), text);
  }
  console.log(`${kind.name}: ${out} (${String(listFiles(out).length)} files)`);
  rmSync(cwd, { recursive: true, force: true });
  rmSync(planDir, { recursive: true, force: true });
}

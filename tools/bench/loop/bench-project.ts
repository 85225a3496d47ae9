// The loop benches' fixture: the e2e tests' tally project, its allium-loop.yaml, a replay script whose weed always
// reports one divergence and whose implement makes a distinct edit each call, a TAP test stub, and bash wrappers
// that log each subprocess's own start and end (ns). Shared by loop-overhead.ts and git-per-tick.ts.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The drift goal the benches run (entry: weed) and its ledger slug. */
export const GOAL = 'make the code match the spec again';
export const SLUG = 'make-the-code-match-the-spec-again';

/** One subprocess span a wrapper logged. */
export interface Span {
  readonly kind: 'agent' | 'test';
  readonly phase: string;
  readonly start: number;
  readonly end: number;
}

const PROJECT: Record<string, string> = {
  'package.json': '{ "type": "module", "private": true }\n',
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
  'src/tally.js':
    "export function closeTally(t) { if (t.status !== 'open') throw new Error('closed'); t.status = 'closed'; }\n",
  'test/tally.test.js': `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeTally } from '../src/tally.js';
test('CloseTally closes an open tally', () => { const t = { status: 'open' }; closeTally(t); assert.equal(t.status, 'closed'); });
`,
};

const TEST_STUB = `process.stdout.write('TAP version 13\\nok 1 - CloseTally closes an open tally\\n1..1\\n# tests 1\\n# pass 1\\n# fail 0\\n');\n`;

/** A bash wrapper that logs `<kind> <phase> <start ns> <end ns>` around `command "$@"`. */
function wrapper(log: string, kind: string, phaseExpr: string, command: string): string {
  return `#!/bin/bash
s=$(date +%s%N)
${command} "$@"
rc=$?
e=$(date +%s%N)
echo "${kind} ${phaseExpr} $s $e" >> ${log}
exit $rc
`;
}

/** The bench fixture for a run of `ticks` ticks: wrappers, test stub and replay script in `dir`. */
export function makeFixture(
  dir: string,
  ticks: number,
): { agent: string; test: string; script: string; log: string } {
  const log = join(dir, 'spans.log');
  const agent = join(dir, 'timed-node.sh');
  const test = join(dir, 'timed-test.sh');
  const stub = join(dir, 'test-stub.mjs');
  writeFileSync(stub, TEST_STUB);
  // The replay adapter runs `<binary> replay-agent.mjs … --phase P …`; the phase is the 7th argument.
  writeFileSync(agent, wrapper(log, 'agent', '$7', process.execPath));
  writeFileSync(test, wrapper(log, 'test', '-', `${process.execPath} ${stub}`));
  chmodSync(agent, 0o755);
  chmodSync(test, 0o755);
  const weed = {
    phase: 'weed',
    repeat: true,
    result: {
      phase: 'weed',
      verdict: 'dirty',
      divergences: [
        {
          subject: 'rule:CloseTally',
          classification: 'code-bug',
          spec: 'specs/tally.allium:7 records who closed the tally',
          code: 'src/tally.js:1 closing does not record who closed it',
        },
      ],
      summary: 'one divergence',
    },
  };
  const implement = Array.from({ length: ticks + 2 }, (_, i) => ({
    phase: 'implement',
    write: { 'src/note.js': `export const attempt = ${String(i + 1)};\n` },
    result: {
      phase: 'implement',
      files_changed: ['src/note.js'],
      contested_tests: [],
      summary: `attempt ${String(i + 1)}`,
    },
  }));
  const script = join(dir, 'script.json');
  writeFileSync(script, JSON.stringify({ version: 1, steps: [weed, ...implement] }, null, 2));
  return { agent, test, script, log };
}

/** A fresh git repository holding the project and its allium-loop.yaml. */
export function makeProject(parent: string, name: string, fixture: ReturnType<typeof makeFixture>): string {
  const dir = join(parent, name);
  for (const [path, text] of Object.entries(PROJECT)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  writeFileSync(
    join(dir, 'allium-loop.yaml'),
    [
      `testCommand: ${fixture.test}`,
      'agent:',
      '  kind: replay',
      `  script: ${fixture.script}`,
      `  binary: ${fixture.agent}`,
      'caps:',
      '  noProgressTicks: 1000',
      '  maxFixAttempts: 1000',
      '',
    ].join('\n'),
  );
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=b', '-c', 'user.email=b@b', ...args], { cwd: dir });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'start');
  return dir;
}

export function readSpans(log: string): Span[] {
  let text = '';
  try {
    text = readFileSync(log, 'utf8');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      const [kind, phase, start, end] = line.split(' ');
      return {
        kind: kind as Span['kind'],
        phase: phase!,
        start: Number(start) / 1e6,
        end: Number(end) / 1e6,
      };
    });
}

/**
 * A CommonJS file that, `--require`d by the engine's node process, writes the process's own CPU time (user and
 * system, µs; children not included) to `file` as it exits. Returns the path of the script.
 */
export function cpuReporter(dir: string, file: string): string {
  const script = join(dir, 'report-cpu.cjs');
  writeFileSync(
    script,
    `process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(file)}, JSON.stringify(process.cpuUsage())));\n`,
  );
  return script;
}

/** The CPU time (ms) a {@link cpuReporter} wrote. */
export function readCpuMs(file: string): number {
  const usage = JSON.parse(readFileSync(file, 'utf8')) as { user: number; system: number };
  return (usage.user + usage.system) / 1000;
}

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from './cli-io.js';
import { COMMANDS, type LazyCommand } from './commands/index.js';
import { prepareDemo, DEMO_DIR, DEMO_GOAL } from './commands/demo.js';
import { RUN_FLAG_SCHEMA } from './commands/run-flags.js';
import { makeProject, runCli as runProcess, startCli } from './e2e/e2e.test-helpers.js';
import { runCli } from './run-cli.js';

const SCRIPT = join(DEMO_DIR, 'replay', 'script.json');

async function cli(args: string[], cwd = '/nonexistent-allium-loop-cwd') {
  const io = createRecordingIo(cwd, { PATH: process.env['PATH'] });
  const code = await runCli(args, io, { version: '9.9.9' });
  return { code, out: io.out(), err: io.err() };
}

describe('every command answers --help with its own usage and exit 0', () => {
  for (const command of COMMANDS) {
    it(`${command.name} --help`, async () => {
      for (const flag of ['--help', '-h']) {
        const { code, out, err } = await cli(
          command.name === 'spec' ? [command.name, flag] : [command.name, flag],
        );
        expect(err).toBe('');
        expect(code).toBe(0);
        expect(out).toContain(`allium-loop ${command.name}`);
      }
    });
  }

  it('run --help lists every flag of run, the loop modes included', async () => {
    const { out } = await cli(['run', '--help']);
    for (const [name, spec] of Object.entries(RUN_FLAG_SCHEMA)) {
      if (spec.scope === 'resume') expect(out).not.toContain(`--${name} `);
      else expect(out).toContain(`--${name}`);
    }
    expect(out).toContain('--verify "<command>"');
    expect(out).toContain('--state-file [path]');
  });

  it('the command table says what each loaded command says of itself', async () => {
    for (const entry of COMMANDS as readonly LazyCommand[]) {
      const loaded = await entry.load();
      expect({ name: loaded.name, synopsis: loaded.synopsis, summary: loaded.summary }).toEqual({
        name: entry.name,
        synopsis: entry.synopsis,
        summary: entry.summary,
      });
    }
  });
});

describe('bad command lines exit 2 with a message naming the problem', () => {
  const cases: [string, string[], RegExp][] = [
    ['an unknown flag', ['run', 'g', '--frobnicate'], /Unknown option '--frobnicate'/],
    ['a bad number', ['run', 'g', '--max-ticks', 'two'], /--max-ticks takes a positive whole number/],
    ['a zero cap', ['run', 'g', '--budget-usd', '0'], /--budget-usd takes a positive number/],
    ['a mode flag without a mode', ['run', 'g', '--hillclimb'], /--hillclimb belongs to the loop modes/],
    ['a spec-loop flag with a mode', ['run', 'g', '--verify', 'true', '--entry', 'tend'], /--entry belongs/],
    ['two exclusive modes', ['run', 'g', '--state-file', '--verify', 'x'], /cannot be combined/],
    ['a mode flag on resume', ['resume', 'some-run', '--verify', 'true'], /resume continues one/],
    [
      'an unknown agent',
      ['run', 'g', '--agent', 'hal9000'],
      /agent setting is wrong \(agent "hal9000"\).*kind/,
    ],
    [
      'an unknown --agent-command placeholder',
      ['run', 'g', '--agent-command', 'node agent.mjs {prompt_fil}'],
      /unknown placeholder \{prompt_fil\}/,
    ],
    ['an unclosed quote', ['run', 'g', '--agent-command', 'node "x'], /unclosed " in --agent-command/],
    ['replay without a script', ['run', 'g', '--agent', 'replay'], /needs --agent-script/],
    ['two goals', ['run', 'one', 'two'], /one quoted argument/],
    ['a bad entry', ['run', 'g', '--entry', 'sideways'], /--entry takes one of/],
    ['a bad drift policy', ['resume', 'r', '--on-drift', 'maybe'], /--on-drift takes one of/],
    ['resume without a slug', ['resume'], /name one run/],
    ['a bad global flag', ['--frobnicate'], /Unknown option/],
    ['an unknown command', ['frobnicate'], /unknown command 'frobnicate'/],
  ];
  for (const [what, args, message] of cases) {
    it(what, async () => {
      const project = await makeProject({ 'specs/a.allium': '-- allium: 3\n' });
      const { code, err } = await cli(args, project);
      expect(err).toMatch(message);
      expect(code).toBe(2);
    });
  }

  it('a project without a test command exits 2 and says to set testCommand', async () => {
    const project = await makeProject({ 'specs/a.allium': '-- allium: 3\n', 'README.md': 'no tests\n' });
    const { code, err } = await cli(['run', 'add a thing', '--agent-script', SCRIPT], project);
    expect(err).toMatch(/testCommand/);
    expect(code).toBe(2);
  });

  it('a missing agent binary names how to install it', async () => {
    const project = await prepareDemo();
    const run = await runProcess(['run', 'add loans', '--agent', 'codex', '--max-ticks', '1'], project, {
      PATH: `${join(project, 'no-such-bin')}:/usr/bin:/bin:${join(process.execPath, '..')}`,
    });
    expect(run.stdout).toMatch(/'codex' was not found on PATH.*Install Codex/s);
    expect(run.code).toBe(1);
  });
});

describe('a closed stdout (allium-loop run … | head -1)', { timeout: 600_000 }, () => {
  it('ends the output quietly and the run still reaches its terminal state', async () => {
    const project = await prepareDemo();
    const { child, done } = startCli(['run', DEMO_GOAL, '--agent-script', SCRIPT], project);
    // Read the first line, then close the pipe as `head -1` does.
    await new Promise<void>((resolve) => {
      let seen = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('\n')) {
          child.stdout!.destroy();
          resolve();
        }
      });
    });
    const run = await done;
    expect(run.stderr).not.toMatch(/EPIPE|Error:|at .*\.js/);
    expect(run.code).toBe(0);
    const ledgers = (await readdir(join(project, '.allium-loop'))).filter((f) => /^[^.]+\.json$/.test(f));
    const ledger = JSON.parse(await readFile(join(project, '.allium-loop', ledgers[0]!), 'utf8')) as {
      status: string;
      terminal: { state: string } | null;
    };
    expect(ledger.terminal?.state).toBe('converged');
  });
});

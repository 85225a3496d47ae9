import { access, appendFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRecordingIo, type CliIo } from '../cli-io.js';
import { runCli } from '../run-cli.js';
import { TALLY_PROJECT, makeProject, readLedger } from './e2e.test-helpers.js';

const MISSING = 'allium-loop-no-such-agent-binary';
// The agent cannot start: the run ends `failed` at once, after its ledger recorded the goal it was given.
const AGENT = ['--agent-command', `${MISSING} {phase}`];

async function cli(args: readonly string[], cwd: string, tty?: { answers: string[]; asked: string[] }) {
  const recording = createRecordingIo(cwd, { PATH: process.env['PATH'], HOME: process.env['HOME'] });
  const io: CliIo =
    tty === undefined
      ? recording
      : {
          ...recording,
          isTTY: true,
          prompt: async (question) => {
            tty.asked.push(question);
            return tty.answers.shift();
          },
        };
  const code = await runCli(args, io, { version: '9.9.9' });
  return { code, out: recording.out(), err: recording.err() };
}

async function onlySlug(dir: string): Promise<string> {
  const names = (await readdir(join(dir, '.allium-loop'))).filter((f) => /^[a-z0-9-]+\.json$/.test(f));
  expect(names).toHaveLength(1);
  return names[0]!.replace(/\.json$/, '');
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('run without a goal', { timeout: 300_000 }, () => {
  it('nothing to infer and no terminal: a usage error naming what was looked at; nothing written', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const run = await cli(['run', ...AGENT], dir);
    expect(run.code).toBe(2);
    expect(run.err).toContain('allium-loop run: no goal given, and none to infer');
    expect(run.err).toContain('no blocking question is open, the tests pass');
    expect(run.err).toContain('allium-loop run "<goal>"');
    expect(await exists(join(dir, '.allium-loop'))).toBe(false);
  });

  it('a failing test becomes the goal, named, and the run starts with it', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    await writeFile(join(dir, 'src/tally.js'), 'export function closeTally(t) {}\n');
    const run = await cli(['run', ...AGENT], dir);
    expect(run.out).toContain('No goal given; inferred from the project (node --test fails (1 failing))');
    const goal = (await readLedger(dir, await onlySlug(dir)))['goal'];
    expect(goal).toBe('make the failing test pass: CloseTally closes an open tally');
    expect(run.code).toBe(1);
  });

  it('drift: spec changes since the last commit become the goal when the tests pass', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    await appendFile(
      join(dir, 'specs/tally.allium'),
      '\nrule ReopenTally {\n    when: ReopenRequested(tally)\n    requires: tally.status = closed\n    ensures: tally.status = open\n}\n',
    );
    const run = await cli(['run', '--json', ...AGENT], dir);
    // With --json the announcement goes to stderr; stdout stays journal events.
    expect(run.err).toContain('the spec changed since the last commit');
    const goal = (await readLedger(dir, await onlySlug(dir)))['goal'];
    expect(goal).toBe('bring the code in line with the spec changes in specs/tally.allium');
  });

  it('on a terminal with nothing to infer, asks one question and runs the answer', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const tty = { answers: ['add a reopen rule'], asked: [] as string[] };
    await cli(['run', ...AGENT], dir, tty);
    expect(tty.asked).toHaveLength(1);
    expect(tty.asked[0]).toContain('What should this run do?');
    expect((await readLedger(dir, 'add-a-reopen-rule'))['goal']).toBe('add a reopen rule');
  });

  it('on a terminal, an empty answer is a usage error and nothing is written', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const tty = { answers: [''], asked: [] as string[] };
    const run = await cli(['run', ...AGENT], dir, tty);
    expect(run.code).toBe(2);
    expect(run.err).toContain('no goal given');
    expect(await exists(join(dir, '.allium-loop'))).toBe(false);
  });
});

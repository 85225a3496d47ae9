import { access, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { runCli } from '../run-cli.js';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  makeProject,
  readJournal,
  readLedger,
  weedStep,
  writeScript,
} from './e2e.test-helpers.js';

async function cli(args: readonly string[], cwd: string) {
  const io = createRecordingIo(cwd, { PATH: process.env['PATH'], HOME: process.env['HOME'] });
  const code = await runCli(args, io, { version: '9.9.9' });
  return { code, out: io.out(), err: io.err() };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('--scope bounds every phase', { timeout: 300_000 }, () => {
  it('edits outside the scope are reverted and journaled; the scope is recorded, so resume keeps it', async () => {
    const dir = await makeProject({
      ...TALLY_PROJECT,
      'docs/keep.md': 'original\n',
      'docs/gone.md': 'kept\n',
    });
    // Started with an agent that cannot start: the run ends `failed` with its scope recorded.
    const first = await cli(
      [
        'run',
        DRIFT_GOAL,
        '--scope',
        'src,specs/,./test',
        '--agent-command',
        'allium-loop-no-such-agent {phase}',
      ],
      dir,
    );
    expect(first.code, first.out + first.err).toBe(1);
    expect(first.out).toContain('Scope: specs, src, test (the phases see and change only these paths).');
    expect((await readLedger(dir, DRIFT_SLUG))['modeState'].config.scope).toEqual(['specs', 'src', 'test']);

    // Resumed without --scope: the weed phase edits inside and outside the recorded scope.
    const script = await writeScript(join(dir, '..', `${DRIFT_SLUG}-scope`), [
      weedStep(false, {
        write: { 'docs/keep.md': 'rewritten\n', 'NOTES.md': 'new\n', 'src/notes.txt': 'in scope\n' },
        delete: ['docs/gone.md'],
      }),
    ]);
    const resumed = await cli(['resume', DRIFT_SLUG, '--agent-script', script], dir);
    expect(resumed.code, resumed.out + resumed.err).toBe(0);

    expect(await readFile(join(dir, 'docs/keep.md'), 'utf8')).toBe('original\n');
    expect(await exists(join(dir, 'NOTES.md'))).toBe(false);
    expect(await readFile(join(dir, 'docs/gone.md'), 'utf8')).toBe('kept\n');
    expect(await readFile(join(dir, 'src/notes.txt'), 'utf8')).toBe('in scope\n');
    const violations = (await readJournal(dir, DRIFT_SLUG)).filter(
      (e) => e['type'] === 'violation' && e['kind'] === 'outside_scope',
    );
    expect(violations.map((v) => [v['path'], v['reverted']]).sort()).toEqual([
      ['NOTES.md', true],
      ['docs/gone.md', true],
      ['docs/keep.md', true],
    ]);
    expect(String(violations[0]!['detail'])).toContain("outside the run's scope (specs, src, test)");
  });

  it('the phases are told the scope and shown only the files inside it', async () => {
    const dir = await makeProject({ ...TALLY_PROJECT, 'lib/other.js': 'export const other = 1;\n' });
    // A command agent that keeps a copy of its prompt (outside the project) and reports a clean weed.
    const outside = await mkdtemp(join(tmpdir(), 'scope-prompt-'));
    const agent = join(outside, 'capture.mjs');
    await writeFile(
      agent,
      `import { copyFileSync, writeFileSync } from 'node:fs';
copyFileSync(process.argv[2], ${JSON.stringify(join(outside, 'prompt.md'))});
writeFileSync(process.argv[3], JSON.stringify({ phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' }));
`,
    );
    const run = await cli(
      [
        'run',
        DRIFT_GOAL,
        '--scope',
        'src,specs',
        '--agent-command',
        `node ${agent} {prompt_file} {result_file}`,
      ],
      dir,
    );
    expect(run.code, run.out + run.err).toBe(0);
    const prompt = await readFile(join(outside, 'prompt.md'), 'utf8');
    expect(prompt).toContain('Scope of this run: read and change only specs, src.');
    expect(prompt).toContain('src/tally.js');
    expect(prompt).not.toContain('lib/other.js');
    expect(prompt).not.toContain('test/tally.test.js');
  });

  it('a scope that does not exist or leaves the project is a usage error; nothing is written', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const missing = await cli(['run', DRIFT_GOAL, '--scope', 'src,nowhere', '--agent-script', 'x.json'], dir);
    expect(missing.err).toContain('--scope nowhere: no such file or folder in the project.');
    expect(missing.code).toBe(2);
    const outside = await cli(
      ['run', DRIFT_GOAL, '--scope', '../elsewhere', '--agent-script', 'x.json'],
      dir,
    );
    expect(outside.err).toContain('--scope ../elsewhere is outside the project.');
    expect(outside.code).toBe(2);
    expect(await exists(join(dir, '.allium-loop', `${DRIFT_SLUG}.json`))).toBe(false);
  });
});

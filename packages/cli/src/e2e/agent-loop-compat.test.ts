import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { runModeCommand } from '../commands/run-modes.js';
import { makeProject, readJournal, type LooseJson } from './e2e.test-helpers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');
const FIXTURE = join(ROOT, 'examples/agent-loop');
const STORY_AGENT = join(ROOT, 'tools/fake-agents/modes/story-agent.mjs');

/**
 * The documented formats of agent-loop's files, as the engine must write them (docs/modes.md, "--stories").
 * A progress entry: `### <id> — <title>`, `Date:`, `Iteration:`, `Verdict:` (PASS, SKIP-EVAL, REJECTED — reason,
 * WARN — reason, then ` [BLOCKED]` when it blocked the story), an optional `Warning:` line, `---`, a blank line.
 */
const PROGRESS_ENTRY =
  /^### (US-\d{3}) — (.+)\nDate: \d{4}-\d\d-\d\dT[\d:.]+Z\nIteration: (\d+)\nVerdict: (PASS|SKIP-EVAL|REJECTED — .+|WARN — .+?)( \[BLOCKED\])?\n(Warning: .+\n)?---\n\n/;

function progressEntries(text: string): RegExpExecArray[] {
  const entries: RegExpExecArray[] = [];
  let rest = text;
  while (rest.length > 0) {
    const match = PROGRESS_ENTRY.exec(rest);
    if (match === null) throw new Error(`not an agent-loop progress entry:\n${rest}`);
    entries.push(match);
    rest = rest.slice(match[0].length);
  }
  return entries;
}

/** A git repository holding a copy of the fixture. */
async function project(): Promise<string> {
  const entries = await readdir(FIXTURE, { recursive: true, withFileTypes: true });
  const files: Record<string, string> = {};
  for (const entry of entries.filter((e) => e.isFile())) {
    const path = join(entry.parentPath, entry.name);
    files[relative(FIXTURE, path)] = await readFile(path, 'utf8');
  }
  return makeProject(files);
}

async function journal(cwd: string): Promise<LooseJson[]> {
  const slug = readdirSync(join(cwd, '.allium-loop'))
    .find((name) => name.endsWith('.events.ndjson'))!
    .replace(/\.events\.ndjson$/, '');
  return readJournal(cwd, slug);
}

describe('an agent-loop setup runs unchanged under --stories (compatibility fixture: examples/agent-loop)', () => {
  it('reads .loop/config.json, .loop/prd.json and the custom prompts; writes prd.json and progress.md in the documented formats', async () => {
    const cwd = await project();
    const planDir = await mkdtemp(join(tmpdir(), 'agent-loop-plan-'));
    const plan = join(planDir, 'plan.json');
    const csv = 'id,amount\n1,10.00\n';
    await writeFile(
      plan,
      JSON.stringify({
        generate: [
          // Crashes after writing a first draft: a warning, the loop goes on to the evaluator.
          { write: { 'src/export.js': 'export const rows = [];\n' }, exitCode: 1 },
          { write: { 'src/export.js': 'export const csv = "1,10.0";\n' } },
          { write: { 'src/export.js': `export const csv = ${JSON.stringify(csv)};\n` } },
        ],
        evaluate: [
          // Breaks its "never edit" rule: the edit is reverted and its PASS discarded.
          {
            write: { 'src/export.js': 'export const csv = "fixed by the evaluator";\n' },
            verdict: { verdict: 'PASS' },
          },
          { verdict: { verdict: 'REJECT', reason: 'amounts use one decimal' } },
          { verdict: { verdict: 'PASS' } },
        ],
      }),
    );
    const home = await mkdtemp(join(tmpdir(), 'agent-loop-home-'));
    const io = createRecordingIo(cwd, { PATH: process.env['PATH'], HOME: home });
    const code = await runModeCommand(
      ['--stories', '--agent-command', `node ${STORY_AGENT} ${plan} {phase} {prompt_file} {result_file}`],
      io,
    );
    const out = io.out();
    expect(io.err()).toBe('');
    expect(code).toBe(0);

    // The run's settings came from .loop/config.json: maxIterations 8 is the tick cap, mode implement.
    expect(out).toContain('Iteration 1/8 — US-001: Export invoices as CSV');
    expect(out).toContain('warning: the generator ended failed');
    expect(out).toContain('2/2 stories complete');
    expect(out).toContain('passed: 2 · blocked: 0 · remaining: 0');

    // The custom prompts, with their template variables filled.
    const generated = await readFile(`${plan}.generate-1.prompt.txt`, 'utf8');
    expect(generated).toContain('You are a Generator agent in an autonomous agent loop.');
    expect(generated).toContain('Work on US-001 (Export invoices as CSV) from');
    expect(generated).toContain('Read at most 12 files and edit at most 4.');
    expect(generated).toContain('# Mode: Implement — Generator');
    expect(generated).not.toMatch(/\{\{/);
    const evaluated = await readFile(`${plan}.evaluate-1.prompt.txt`, 'utf8');
    const sha = /git diff ([0-9a-f]{40})/.exec(evaluated)?.[1];
    expect(sha).toBeDefined();
    // The pre-generator commit holds the tree before the generator: src/export.js did not exist yet.
    expect(() =>
      execFileSync('git', ['cat-file', '-e', `${sha!}:src/export.js`], { cwd, stdio: 'ignore' }),
    ).toThrow();
    expect(evaluated).not.toMatch(/\{\{/);

    // The evaluator's edit was reverted: the file holds what the generator wrote last.
    expect(await readFile(join(cwd, 'src/export.js'), 'utf8')).toBe(
      `export const csv = ${JSON.stringify(csv)};\n`,
    );
    const events = await journal(cwd);
    expect(events.find((e) => e.type === 'violation' && e.kind === 'evaluator_edited')).toMatchObject({
      reverted: true,
    });
    expect(events.some((e) => e.type === 'x-stories.generator_crashed')).toBe(true);

    // prd.json: passes set, other keys kept, the rejection noted as [REJECTED] reason.
    const prd = JSON.parse(await readFile(join(cwd, '.loop/prd.json'), 'utf8')) as {
      branchName: string;
      userStories: { id: string; passes: boolean; notes: string; rejections?: number }[];
    };
    expect(prd.branchName).toBe('loop/invoicing');
    expect(prd.userStories.map((s) => [s.id, s.passes])).toEqual([
      ['US-001', true],
      ['US-002', true],
    ]);
    expect(prd.userStories[0]).toMatchObject({ notes: '[REJECTED] amounts use one decimal', rejections: 1 });

    // progress.md: one entry per iteration, each in the documented layout.
    const entries = progressEntries(await readFile(join(cwd, '.loop/progress.md'), 'utf8'));
    expect(entries.map((m) => [m[1], m[3], m[4]])).toEqual([
      ['US-001', '1', 'WARN — the evaluator edited src/export.js; reverted, and its verdict discarded'],
      ['US-001', '2', 'REJECTED — amounts use one decimal'],
      ['US-001', '3', 'PASS'],
      ['US-002', '4', 'PASS'],
    ]);
    expect(entries[0]?.[6]).toBe('Warning: the generator crashed (failed); the loop continued\n');
  });

  it('a flag wins over .loop/config.json: --eval-retries 1 blocks at the first rejection ([BLOCKED])', async () => {
    const cwd = await project();
    const planDir = await mkdtemp(join(tmpdir(), 'agent-loop-plan-'));
    const plan = join(planDir, 'plan.json');
    await writeFile(
      plan,
      JSON.stringify({
        generate: [{}],
        evaluate: [{ verdict: { verdict: 'REJECT', reason: 'nothing written' } }],
      }),
    );
    const home = await mkdtemp(join(tmpdir(), 'agent-loop-home-'));
    const io = createRecordingIo(cwd, { PATH: process.env['PATH'], HOME: home });
    const code = await runModeCommand(
      [
        '--stories',
        '.loop/prd.json',
        '--eval-retries',
        '1',
        '--agent-command',
        `node ${STORY_AGENT} ${plan} {phase} {prompt_file} {result_file}`,
      ],
      io,
    );
    expect(code).toBe(4);
    const prd = JSON.parse(await readFile(join(cwd, '.loop/prd.json'), 'utf8')) as {
      userStories: { notes: string; blocked?: boolean }[];
    };
    expect(prd.userStories[0]).toMatchObject({
      blocked: true,
      notes: '[REJECTED] nothing written\n[BLOCKED] rejected 1 time; needs a human',
    });
    const entries = progressEntries(await readFile(join(cwd, '.loop/progress.md'), 'utf8'));
    expect(entries.map((m) => `${m[4]}${m[5] ?? ''}`)).toEqual([
      'REJECTED — nothing written [BLOCKED]',
      'REJECTED — nothing written [BLOCKED]',
    ]);
    expect(io.out()).toContain('0/2 stories complete');
  });
});

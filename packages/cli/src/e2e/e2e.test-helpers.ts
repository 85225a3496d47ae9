import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';

const exec = promisify(execFile);
/** The CLI as this test run bundled it from the current sources (see cli-bundle.test-helpers.ts). */
export const CLI_BIN = inject('cliBin');

/** What a CLI child process did. */
export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Starts the real `allium-loop` executable (this run's bundle of the sources) as a child process in `cwd`. With
 * `output` (an open file descriptor) its stdout and stderr go to that file, as `allium-loop … > file 2>&1` would.
 */
export function startCli(
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
  output?: number,
): { child: ChildProcess; done: Promise<CliRun> } {
  const child = spawn(process.execPath, [CLI_BIN, ...args], {
    cwd,
    env: { ...process.env, FORCE_COLOR: '0', CI: 'true', ...env },
    stdio: ['ignore', output ?? 'pipe', output ?? 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<CliRun>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

/** Runs the CLI to completion. */
export async function runCli(
  args: readonly string[],
  cwd: string,
  env: Record<string, string> = {},
): Promise<CliRun> {
  return startCli(args, cwd, env).done;
}

/** A new temporary git repository holding `files` (path → text), committed once. */
export async function makeProject(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'allium-loop-e2e-'));
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  const git = (...args: string[]) =>
    exec('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@localhost', ...args], { cwd: dir });
  await git('init', '--quiet');
  await git('add', '-A');
  await git('commit', '--quiet', '--allow-empty', '-m', 'start');
  return dir;
}

/** Writes a replay script (see docs/agents.md) into the project's `.replay/` folder and returns its path. */
export async function writeScript(dir: string, steps: readonly Record<string, unknown>[]): Promise<string> {
  const path = join(dir, '..', `${dir.split('/').pop() ?? 'x'}-script.json`);
  await writeFile(path, JSON.stringify({ version: 1, steps }, null, 2));
  return path;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read ledger and journal JSON loosely on purpose
export type LooseJson = Record<string, any>;

/** The project's only ledger, parsed. */
export async function readLedger(dir: string, slug: string): Promise<LooseJson> {
  return JSON.parse(await readFile(join(dir, '.allium-loop', `${slug}.json`), 'utf8')) as LooseJson;
}

/** The journal's events, parsed. */
export async function readJournal(dir: string, slug: string): Promise<LooseJson[]> {
  const text = await readFile(join(dir, '.allium-loop', `${slug}.events.ndjson`), 'utf8');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LooseJson);
}

/** A small spec-first project: a spec with one rule and code and tests that already agree. */
export const TALLY_PROJECT: Record<string, string> = {
  'package.json': '{ "type": "module", "private": true }\n',
  'allium-loop.yaml': 'testCommand: node --test\n',
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

/** A weed step: dirty with one code-bug divergence, or clean. */
export function weedStep(dirty: boolean, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    phase: 'weed',
    result: dirty
      ? {
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
        }
      : CLEAN_WEED_RECORD,
    ...extra,
  };
}

/** An implement step that changes nothing (a stuck agent). */
export function idleImplement(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    phase: 'implement',
    result: { phase: 'implement', files_changed: [], contested_tests: [], summary: 'tried' },
    ...extra,
  };
}

/** The slug `allium-loop` derives from the drift goal these tests use. */
export const DRIFT_GOAL = 'make the code match the spec again';
export const DRIFT_SLUG = 'make-the-code-match-the-spec-again';

/** Validates `value` against one of the upstream Allium schemas vendored in docs/schemas/upstream (ajv). */
export async function expectUpstreamValid(schemaFile: string, value: unknown): Promise<void> {
  const { Ajv } = await import('ajv');
  const schema = JSON.parse(
    await readFile(new URL(`../../../../docs/schemas/upstream/${schemaFile}`, import.meta.url), 'utf8'),
  ) as object;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  if (!validate(value))
    throw new Error(
      `not valid against ${schemaFile}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value)}`,
    );
}

/** The run's witness record `.allium-loop/<slug>.witness.json`, checked against the upstream witness schema. */
export async function readWitness(dir: string, slug: string): Promise<LooseJson> {
  const record = JSON.parse(
    await readFile(join(dir, '.allium-loop', `${slug}.witness.json`), 'utf8'),
  ) as LooseJson;
  await expectUpstreamValid('witness-result.schema.json', record);
  return record;
}

/** The run's trace `.allium-loop/<slug>.trace.jsonl`, every line checked against the upstream trace-entry schema. */
export async function readTrace(dir: string, slug: string): Promise<LooseJson[]> {
  const text = await readFile(join(dir, '.allium-loop', `${slug}.trace.jsonl`), 'utf8');
  const lines = text
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as LooseJson);
  for (const line of lines) await expectUpstreamValid('trace-entry.schema.json', line);
  return lines;
}

/**
 * A scripted propagate step in the upstream record: it writes `files` (path → content), records each one's sha256
 * as `generated_tests` (the tamper baseline), and claims in its engine-side record (`loop`) which obligations — by
 * id or by construct — each file covers. `uncovered` are the obligations it reports it could not cover, with the
 * upstream classification and reason.
 */
export function propagateStep(
  files: Readonly<Record<string, string>>,
  covers: Readonly<Record<string, readonly string[]>>,
  summary: string,
  options: {
    readonly uncovered?: readonly { obligation: string; classification: string; reason: string }[];
    readonly extra?: Record<string, unknown>;
  } = {},
): Record<string, unknown> {
  const paths = Object.keys(covers);
  const uncovered = options.uncovered ?? [];
  return {
    phase: 'propagate',
    write: files,
    result: {
      phase: 'propagate',
      obligations: {
        total: paths.length + uncovered.length,
        covered: paths.length,
        uncovered: uncovered.length,
      },
      uncovered_obligations: uncovered,
      generated_tests: paths.map((path) => ({
        path,
        hash: `sha256:${createHash('sha256')
          .update(files[path] ?? '', 'utf8')
          .digest('hex')}`,
      })),
      summary,
    },
    loop: { covers: paths.map((path) => ({ path, obligations: covers[path] })) },
    ...options.extra,
  };
}

/** An upstream tend (or, with `phase`, elicit/distill) record for `specPath`, listing its open questions. */
export function specRecord(
  phase: 'elicit' | 'tend' | 'distill',
  specPath: string,
  summary: string,
  openQuestions: readonly string[] = [],
): Record<string, unknown> {
  return { phase, spec_path: specPath, open_questions: [...openQuestions], summary };
}

/** A clean upstream weed record. */
export const CLEAN_WEED_RECORD = { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' };

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  makeProject,
  runCli,
  writeScript,
  type CliRun,
} from '../e2e/e2e.test-helpers.js';
import { CLEAN_WEED, FAST_TALLY, exists, listFiles, recordFigure } from './reliability.test-helpers.js';

/** API-key-shaped values: two in the environment under secret names, one only in the agent's output. */
const ENV_SECRETS = {
  ANTHROPIC_API_KEY: 'sk-ant-api03-Zq7Xw2Lr9Tb4Nc6Vd8Fh1Jk3Mp5Qs0Uy2Wa4Ec6Gi8Ko0Rt-AAAA',
  GITHUB_TOKEN: 'ghp_R4nd0mT0k3nV4lu3F0rT3st1ngOnlyXYZ12',
};
const OUTPUT_ONLY_SECRET = 'sk-proj-Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90';

/** A Node stack frame in stderr means an uncaught crash rather than a clear error. */
const STACK_FRAME = /\n\s+at .+:\d+:\d+\)?\n/;

function expectClearError(run: CliRun, code: number, message: RegExp): void {
  expect(run.code, run.stdout + run.stderr).toBe(code);
  expect(run.stderr).toMatch(message);
  expect(run.stderr).not.toMatch(STACK_FRAME);
}

/** Runs a one-weed goal whose agent prints the secrets (and may put them in `result`); lists where they appear. */
async function secretRun(result: Record<string, unknown>) {
  // The test command prints the environment's secrets too, so test-output logs are searched with secrets in them.
  const dir = await makeProject({
    ...FAST_TALLY,
    'allium-loop.yaml':
      'testCommand: \'echo "test debug $ANTHROPIC_API_KEY $GITHUB_TOKEN" >&2; node test/check.mjs\'\n',
  });
  const leak = `debug: ANTHROPIC_API_KEY=${ENV_SECRETS.ANTHROPIC_API_KEY} token ${ENV_SECRETS.GITHUB_TOKEN} header Authorization: Bearer ${OUTPUT_ONLY_SECRET}`;
  const script = await writeScript(dir, [{ phase: 'weed', stdout: leak, result }]);
  const run = await runCli(
    ['run', DRIFT_GOAL, '--agent', 'replay', '--agent-script', script],
    dir,
    ENV_SECRETS,
  );
  expect(run.code, run.stderr).toBe(0);
  const report = await runCli(['report', DRIFT_SLUG], dir, ENV_SECRETS);
  expect(report.code).toBe(0);
  const files = await listFiles(join(dir, '.allium-loop'));
  expect(files.some((f) => f.includes('transcripts/'))).toBe(true);
  const logs = files.filter((f) => f.endsWith('test-output.log'));
  expect(logs.length).toBeGreaterThan(0);
  for (const log of logs)
    expect(await readFile(join(dir, '.allium-loop', log), 'utf8')).toContain('test debug [REDACTED] [REDACTED]');
  const texts: [string, string][] = [
    ['stdout', run.stdout + run.stderr],
    ['report', report.stdout + report.stderr],
  ];
  for (const file of files) texts.push([file, await readFile(join(dir, '.allium-loop', file), 'utf8')]);
  const secrets = [...Object.values(ENV_SECRETS), OUTPUT_ONLY_SECRET];
  const leaks = texts.flatMap(([where, text]) =>
    secrets.filter((s) => text.includes(s)).map((s) => `${where}: ${s.slice(0, 8)}…`),
  );
  const transcript = texts.find(([where]) => where.includes('transcripts/'))?.[1] ?? '';
  return { leaks, places: texts.length, files: files.length, transcript };
}

let resultLeakRun: ReturnType<typeof secretRun> | undefined;

/** One shared run whose weed result's summary names the secrets (two tests read it). */
function resultLeak(): ReturnType<typeof secretRun> {
  resultLeakRun ??= secretRun({
    ...CLEAN_WEED,
    summary: `clean; used ${ENV_SECRETS.ANTHROPIC_API_KEY} and ${OUTPUT_ONLY_SECRET}`,
  });
  return resultLeakRun;
}

describe.concurrent('secrets and hostile input through the CLI', { timeout: 240_000 }, () => {
  it('API-key-shaped values in the environment and in agent output appear nowhere in .allium-loop/, stdout or the report', async () => {
    const { leaks, places, files, transcript } = await secretRun(CLEAN_WEED);
    expect(leaks).toEqual([]);
    // The transcript still shows that the agent printed something there.
    expect(transcript).toContain('debug:');
    await recordFigure(
      'secrets',
      `3 key-shaped values (2 in env, 1 only in agent output) × ${String(places)} places searched (${String(files)} files under .allium-loop/, stdout, report): 0 found`,
    );
  });

  it('key-shaped values inside a result file reach neither the ledger, the journal, transcripts, stdout nor the report', async () => {
    const { leaks } = await resultLeak();
    expect(leaks.filter((l) => !l.startsWith(`${DRIFT_SLUG}/results/`))).toEqual([]);
  });

  it('key-shaped values inside a result file are redacted once the engine has read it', async () => {
    const { leaks } = await resultLeak();
    expect(leaks).toEqual([]);
  });

  it('a goal with shell metacharacters is plain text: no command runs, the run works', async () => {
    const dir = await makeProject(FAST_TALLY);
    const script = await writeScript(dir, [{ phase: 'weed', result: CLEAN_WEED, repeat: true }]);
    const goals = [
      'make the code match the spec again $(touch pwned)',
      'make the code match the spec again; touch pwned2 `touch pwned3` | rm -rf src',
    ];
    const runs = await Promise.all(
      goals.map((goal) =>
        runCli(['run', goal, '--agent', 'replay', '--agent-script', script, '--max-ticks', '1'], dir),
      ),
    );
    for (const run of runs) {
      expect(run.stderr).not.toMatch(STACK_FRAME);
      expect([0, 3]).toContain(run.code);
    }
    const files = await listFiles(dir);
    // The slug may spell the words out; a file the shell would have created may not exist anywhere.
    const injected = files.filter((f) => /(^|\/)pwned\d?$/.test(f));
    expect(injected).toEqual([]);
    expect(files).toContain('src/tally.js');
    expect(exists(process.pid)).toBe(true);
    await recordFigure(
      'shell-metacharacters',
      `2 goals with $(…), backticks, ; and | ran as plain text: 0 injected files, src/ intact`,
    );
  });

  it('a goal of 10,000 characters: refused with a clear usage error, nothing written, no crash', async () => {
    const dir = await makeProject(FAST_TALLY);
    const script = await writeScript(dir, [{ phase: 'weed', result: CLEAN_WEED, repeat: true }]);
    const goal = `${DRIFT_GOAL} ${'and keep every tally consistent '.repeat(320)}`.slice(0, 10_000);
    const run = await runCli(
      ['run', goal, '--agent', 'replay', '--agent-script', script, '--max-ticks', '1'],
      dir,
    );
    expect(run.stderr).not.toMatch(STACK_FRAME);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('the goal is 10000 characters; keep it under');
    const names = await listFiles(join(dir, '.allium-loop'));
    expect(names).toEqual([]);
    await recordFigure(
      'long-goal',
      `a 10,000-character goal: refused with exit ${String(run.code)} ("keep it under 4000"), ${String(names.length)} files written, no crash`,
    );
  });

  it('bad input: unknown flag, missing spec path, malformed YAML — clear errors, nothing written', async () => {
    const dir = await makeProject(FAST_TALLY);
    const broken = await makeProject({
      ...FAST_TALLY,
      'allium-loop.yaml': 'testCommand: [node, test/check.mjs\ncaps: {maxTicks: 2\n',
    });
    const [flag, spec, yaml] = await Promise.all([
      runCli(['resume', DRIFT_SLUG, '--frobnicate'], dir),
      runCli(['spec', 'check', 'specs/missing.allium'], dir),
      runCli(['run', DRIFT_GOAL, '--agent', 'replay', '--agent-script', '/nonexistent.json'], broken),
    ]);
    expectClearError(flag, 2, /Unknown option '--frobnicate'/);
    expect(spec.code).not.toBe(0);
    expect(spec.stderr + spec.stdout).toContain('specs/missing.allium');
    expect(spec.stderr).not.toMatch(STACK_FRAME);
    expectClearError(yaml, 2, /allium-loop\.yaml/);
    for (const project of [dir, broken])
      expect((await listFiles(project)).filter((f) => f.startsWith('.allium-loop/'))).toEqual([]);
    await recordFigure(
      'bad-input',
      `unknown flag → exit ${String(flag.code)}, missing spec path → exit ${String(spec.code)}, malformed YAML → exit ${String(yaml.code)}; each names the problem, no stack trace, nothing written`,
    );
  });
});

import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeProject, runCli, type CliRun } from '../e2e/e2e.test-helpers.js';
import { FAST_TALLY, listFiles, recordFigure } from './reliability.test-helpers.js';

// Secrets are assembled from parts so that secret scanners do not flag this file.
const SECRETS = {
  /** The value of a secret-named variable in the engine's environment. */
  env: ['correct', 'horse', 'battery', 'staple'].join('-'),
  /** A GitHub-token-shaped value, printed by the agent on stdout. */
  token: `ghp_${'R4nd0mT0k3n'.repeat(3)}`,
  /** A `password=` assignment, printed by the agent on stderr. */
  password: `open${'sesame'}42x`,
  /** A URL password, printed by the test command and the verify command. */
  urlPassword: `hunter${'22'}pw`,
  /** An OpenAI-key-shaped value, written by the agent into its result file. */
  resultKey: `sk-proj-${'Ab12Cd34Ef56'.repeat(3)}`,
  /** A key in the goal the user typed. */
  goalKey: `goal${'secret'}123`,
};

/** The agent: copies its prompt out of the project, prints secrets on both streams, writes a result with one. */
const AGENT = `import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
const [promptFile, resultFile, phase, promptsLog, touch] = process.argv.slice(2);
appendFileSync(promptsLog, '=== ' + phase + '\\n' + readFileSync(promptFile, 'utf8') + '\\n');
console.log('debug: token ${SECRETS.token}');
console.error('debug: password=${SECRETS.password}');
if (touch === 'touch') writeFileSync('done.txt', 'done\\n');
writeFileSync(resultFile, JSON.stringify({ phase, verdict: 'clean', divergences: [], summary: 'clean; used ${SECRETS.resultKey}' }));
`;

/** A command that prints every kind of secret the engine may see in test or verify output. */
const LEAKY = `echo "db https://bob:${SECRETS.urlPassword}@db.example/x env $DEPLOY_PASSWORD"; echo "stderr $DEPLOY_PASSWORD" >&2`;

describe('secrets never leave the process (issue 14 item 16)', { timeout: 300_000 }, () => {
  it('secrets in every channel (env, goal, agent stdout/stderr, result file, test and verify output) appear in no file under .allium-loop/, no prompt and no output', async () => {
    const dir = await makeProject({
      ...FAST_TALLY,
      'allium-loop.yaml': `testCommand: '${LEAKY}; node test/check.mjs'\n`,
    });
    const agentFile = `${dir}-agent.mjs`;
    const promptsLog = `${dir}-prompts.txt`;
    await writeFile(agentFile, AGENT);
    await appendFile(promptsLog, '');
    const env = { DEPLOY_PASSWORD: SECRETS.env };
    const agent = (extra: string) => [
      '--agent',
      'command',
      '--agent-command',
      `node ${agentFile} {prompt_file} {result_file} {phase} ${promptsLog} ${extra}`,
    ];
    const goal = `make the code match the spec again with api_key=${SECRETS.goalKey}`;
    const runs: [string, CliRun][] = [];
    runs.push(['run', await runCli(['run', goal, ...agent('none'), '--max-ticks', '2'], dir, env)]);
    const verifyGoal = `make the leaky check pass with api_key=${SECRETS.goalKey}`;
    runs.push([
      'run --verify',
      await runCli(
        ['run', verifyGoal, '--verify', `${LEAKY}; test -f done.txt`, ...agent('touch'), '--max-ticks', '3'],
        dir,
        env,
      ),
    ]);
    for (const [name, run] of runs) expect(run.code, `${name}: ${run.stdout}${run.stderr}`).toBe(0);
    const slugs = (await listFiles(join(dir, '.allium-loop')))
      .filter((f) => /^[^./]+\.json$/.test(f))
      .map((f) => f.slice(0, -'.json'.length));
    expect(slugs.length).toBe(2);
    for (const slug of slugs) {
      runs.push([`report ${slug}`, await runCli(['report', slug], dir, env)]);
      runs.push([`report --json ${slug}`, await runCli(['report', slug, '--json'], dir, env)]);
    }
    const files = await listFiles(join(dir, '.allium-loop'));
    expect(files.some((f) => f.endsWith('test-output.log'))).toBe(true);
    const prompts = await readFile(promptsLog, 'utf8');
    // The channels were really exercised: the agent was called in both runs, the verify output reached its prompt.
    expect(prompts).toContain('Last output of the command');
    expect(prompts).toContain('[REDACTED]');
    const texts: [string, string][] = [['prompts given to the agent', prompts]];
    for (const [name, run] of runs) texts.push([`${name} (stdout+stderr)`, run.stdout + run.stderr]);
    for (const file of files) texts.push([file, await readFile(join(dir, '.allium-loop', file), 'utf8')]);
    const leaks = texts.flatMap(([where, text]) =>
      Object.entries(SECRETS)
        .filter(([, secret]) => text.includes(secret))
        .map(([kind]) => `${where}: ${kind}`),
    );
    expect(leaks).toEqual([]);
    await recordFigure(
      'secrets-every-channel',
      `${String(Object.keys(SECRETS).length)} secrets (env value, goal, agent stdout and stderr, result file, test and verify output) × ${String(texts.length)} places (${String(files.length)} files under .allium-loop/, the agent's prompts, ${String(runs.length)} command outputs): 0 found`,
    );
  });
});

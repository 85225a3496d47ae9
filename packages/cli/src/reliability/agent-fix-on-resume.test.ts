import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  makeProject,
  readLedger,
  weedStep,
  writeScript,
} from '../e2e/e2e.test-helpers.js';
import { runCli } from '../run-cli.js';

const MISSING = 'allium-loop-no-such-agent-binary';
const COUNTER_AGENT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  '../../../../tools/fake-agents/modes/counter-agent.mjs',
);

async function cli(args: readonly string[], cwd: string) {
  const io = createRecordingIo(cwd, { PATH: process.env['PATH'], HOME: process.env['HOME'] });
  const code = await runCli(args, io, { version: '9.9.9' });
  return { code, out: io.out(), err: io.err() };
}

const ledgerText = (dir: string, slug: string) => readFile(join(dir, '.allium-loop', `${slug}.json`), 'utf8');

describe('a wrong agent setting is corrected on resume', { timeout: 300_000 }, () => {
  it('spec loop: a missing binary ends the run failed; resume with the right agent carries it to converged', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    const broken = await cli(['run', DRIFT_GOAL, '--agent-command', `${MISSING} {phase}`], dir);
    expect(broken.code, broken.out + broken.err).toBe(1);
    expect((await readLedger(dir, DRIFT_SLUG))['terminal']).toMatchObject({
      state: 'failed',
      error: { code: 'agents.binary_not_found' },
    });

    // Still wrong: refused before the run is touched.
    const before = await ledgerText(dir, DRIFT_SLUG);
    const wrong = await cli(['resume', DRIFT_SLUG, '--agent', 'gpt4'], dir);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('agent setting is wrong');
    expect(await ledgerText(dir, DRIFT_SLUG)).toBe(before);

    const script = await writeScript(join(dir, '..', `${DRIFT_SLUG}-fixed`), [weedStep(false)]);
    const fixed = await cli(['resume', DRIFT_SLUG, '--agent-script', script], dir);
    expect(fixed.code, fixed.out + fixed.err).toBe(0);
    const ledger = await readLedger(dir, DRIFT_SLUG);
    expect(ledger['terminal'].state).toBe('converged');
    // The corrected agent is recorded, so a later resume keeps it.
    expect(ledger['modeState'].config.agent).toMatchObject({ kind: 'replay', script });
  });

  it('verify mode: the same, with the agent and a cap given again on resume; spec-loop flags are refused', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'agent-fix-'));
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8' });
    await writeFile(join(dir, 'README.md'), 'x\n');
    git('init', '-q', '-b', 'main');
    git('config', 'user.name', 'Test');
    git('config', 'user.email', 'test@example.com');
    git('add', '-A');
    git('commit', '-q', '-m', 'initial');
    const slug = 'make-donetxt';
    const broken = await cli(
      ['run', 'make done.txt', '--verify', 'test -f done.txt', '--agent-command', `${MISSING} {phase}`],
      dir,
    );
    expect(broken.code, broken.out + broken.err).toBe(1);
    expect((await readLedger(dir, slug))['terminal']).toMatchObject({
      state: 'failed',
      error: { code: 'agents.binary_not_found' },
    });

    const before = await ledgerText(dir, slug);
    const spec = await cli(['resume', slug, '--entry', 'tend'], dir);
    expect(spec.code).toBe(2);
    expect(spec.err).toContain(`--entry belongs to the spec loop; ${slug} is a verify run`);
    const wrong = await cli(['resume', slug, '--agent-command', 'node agent.mjs {prompt}'], dir);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('unknown placeholder {prompt}');
    expect(await ledgerText(dir, slug)).toBe(before);

    const planDir = await mkdtemp(join(tmpdir(), 'agent-fix-plan-'));
    const plan = join(planDir, 'plan.json');
    await writeFile(plan, JSON.stringify({ calls: [{ write: { 'done.txt': 'yes\n' } }] }));
    const fixed = await cli(
      ['resume', slug, '--agent-command', `node ${COUNTER_AGENT} ${plan}`, '--max-ticks', '4'],
      dir,
    );
    expect(fixed.code, fixed.out + fixed.err).toBe(0);
    expect(fixed.out).toMatch(/converged: the verify command exits 0/);
    const ledger = await readLedger(dir, slug);
    expect(ledger['terminal'].state).toBe('converged');
    expect(ledger['caps'].maxTicks).toBe(4);
    expect(ledger['modeState'].run.agent).toMatchObject({
      kind: 'command',
      argv: ['node', COUNTER_AGENT, plan],
    });
  });
});

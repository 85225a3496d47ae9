import { writeFileSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AlliumLoopError } from '@allium-loop/errors';
import type { AgentRunRequest } from './agent-runner.js';
import {
  describeAgentRunner,
  type FakeBehaviour,
  type RunnerSetup,
} from './describe-agent-runner.test-helpers.js';
import { createReplayAgentRunner } from './replay-agent.js';
import { parseReplayScript, type ReplayStep } from './replay-script.js';

const stepFor: Partial<Record<FakeBehaviour, Partial<ReplayStep>>> = {
  success: {
    write: { 'src/hello.txt': 'hello from the agent\n' },
    costUsd: 0.5,
    tokens: { input: 10, output: 5 },
  },
  fail: { exitCode: 7 },
  hang: { delayMs: 600_000 },
};

const create = (setup: RunnerSetup) => {
  const script = join(setup.workDir, `replay-${setup.behaviour}.json`);
  const step = { phase: 'implement', repeat: true, ...(stepFor[setup.behaviour] ?? stepFor.success) };
  // The runner reads the script at call time; writing it synchronously keeps `create` synchronous.
  writeFileSync(script, JSON.stringify({ version: 1, steps: [step] }));
  return createReplayAgentRunner(
    {
      kind: 'replay',
      script,
      killGraceMs: setup.killGraceMs,
      ...(setup.binary === undefined ? {} : { binary: setup.binary }),
    },
    { env: setup.env },
  );
};

describeAgentRunner({
  name: 'replay',
  create,
  authEnv: 'ANTHROPIC_API_KEY',
  hasFinalResult: true,
  expectedUsage: { costUsd: 0.5, tokens: { input: 10, output: 5 } },
  recordsCall: false,
  skip: ['truncated', 'grandchild', 'huge-output'],
});

async function setup(
  steps: unknown[],
): Promise<{ root: string; cwd: string; request: AgentRunRequest; script: string }> {
  const root = await mkdtemp(join(tmpdir(), 'al-replay-'));
  const cwd = join(root, 'repo');
  await mkdir(join(cwd, 'src'), { recursive: true });
  const script = join(root, 'script.json');
  await writeFile(script, JSON.stringify({ version: 1, steps }));
  const request: AgentRunRequest = {
    prompt: 'go',
    cwd,
    phase: 'implement',
    resultFile: join(root, '.allium-loop', 'demo', 'results', '1-implement.json'),
    timeoutMs: 20_000,
  };
  return { root, cwd, request, script };
}

describe('replay adapter', () => {
  it('plays the Nth step of a phase on its Nth call, writes files and the result atomically, and deletes', async () => {
    const { root, cwd, request, script } = await setup([
      { phase: 'implement', write: { 'src/a.ts': 'one' }, result: { status: 'done', n: 1 } },
      { phase: 'weed', result: { divergences: [] } },
      {
        phase: 'implement',
        write: { 'src/b.ts': { from: 'fixtures/b.ts' } },
        delete: ['src/a.ts'],
        result: { n: 2 },
        exitCode: 4,
      },
    ]);
    await mkdir(join(root, 'fixtures'));
    await writeFile(join(root, 'fixtures', 'b.ts'), 'two from a fixture');
    const runner = createReplayAgentRunner({ kind: 'replay', script });
    const first = await runner.run(request);
    expect(first.outcome).toBe('ok');
    expect(await readFile(join(cwd, 'src/a.ts'), 'utf8')).toBe('one');
    expect(JSON.parse(await readFile(request.resultFile, 'utf8'))).toEqual({ status: 'done', n: 1 });
    expect(first.transcriptPath).toBe(join(root, '.allium-loop', 'demo', 'transcripts', '1-implement.log'));
    const second = await runner.run(request);
    expect(second.outcome).toBe('failed');
    expect(second.exitCode).toBe(4);
    await expect(stat(join(cwd, 'src/a.ts'))).rejects.toThrow();
    expect(await readFile(join(cwd, 'src/b.ts'), 'utf8')).toBe('two from a fixture');
    expect(JSON.parse(await readFile(request.resultFile, 'utf8'))).toEqual({ n: 2 });
    const third = await runner.run(request);
    expect(third.outcome).toBe('failed');
    expect(third.detail).toContain('no step left for phase implement');
  });

  it('keeps its per-phase count across runner instances (a resumed run continues the script)', async () => {
    const { request, script } = await setup([
      { phase: 'implement', result: { n: 1 } },
      { phase: 'implement', result: { n: 2 }, repeat: true },
    ]);
    await createReplayAgentRunner({ kind: 'replay', script }).run(request);
    await createReplayAgentRunner({ kind: 'replay', script }).run(request);
    await createReplayAgentRunner({ kind: 'replay', script }).run(request);
    expect(JSON.parse(await readFile(request.resultFile, 'utf8'))).toEqual({ n: 2 });
  });

  it('refuses to write through a symlink that leaves the working directory', async () => {
    const { root, cwd, request, script } = await setup([
      { phase: 'implement', write: { 'out/x.txt': 'escaped' } },
    ]);
    await mkdir(join(root, 'outside'));
    await symlink(join(root, 'outside'), join(cwd, 'out'));
    const result = await createReplayAgentRunner({ kind: 'replay', script }).run(request);
    expect(result.outcome).toBe('failed');
    expect(result.detail).toContain('escapes the working directory');
    await expect(stat(join(root, 'outside', 'x.txt'))).rejects.toThrow();
  });

  it('rejects an invalid script with every issue, before starting anything', async () => {
    const { request, script } = await setup([
      { phase: 'implement', write: { '../evil.txt': 'x' } },
      { phase: 'nope' },
    ]);
    const error: unknown = await createReplayAgentRunner({ kind: 'replay', script })
      .run(request)
      .catch((e: unknown) => e);
    expect(AlliumLoopError.is(error)).toBe(true);
    expect((error as AlliumLoopError).code).toBe('agents.invalid_config');
    expect((error as Error).message).toContain('steps.0.write');
    expect((error as Error).message).toContain('steps.1.phase');
  });

  it.each([['/etc/passwd'], ['../x'], ['a/../../x'], ['.']])('rejects the path %s', (path) => {
    expect(parseReplayScript({ version: 1, steps: [{ phase: 'tend', delete: [path] }] }).ok).toBe(false);
  });

  it('accepts a nested path that stays inside', () => {
    expect(parseReplayScript({ version: 1, steps: [{ phase: 'tend', delete: ['a/../b/c.txt'] }] }).ok).toBe(
      true,
    );
  });
});

import { mkdtemp, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AlliumLoopError } from '@allium-loop/errors';
import { BASE_ENV_NAMES } from './agent-env.js';
import type { AgentRunner, AgentRunRequest, TokenUsage } from './agent-runner.js';
import { isProcessGroupAlive } from './process-group.js';
import { PROCESS_MARKER } from './process-marker.js';

/** The fake CLIs' folder (tools/fake-agents). */
export const FAKE_AGENTS_DIR = resolve(import.meta.dirname, '../../../tools/fake-agents');

/** Behaviours of the fake CLIs (tools/fake-agents/lib/fake-agent.mjs). */
export type FakeBehaviour =
  | 'success'
  | 'fail'
  | 'hang'
  | 'over-budget'
  | 'max-turns'
  | 'is-error-success'
  | 'rate-limited'
  | 'truncated'
  | 'grandchild-ignores-term'
  | 'huge-output';

/** A secret the runtime environment holds but the agent is not allowed to see. */
export const UNRELATED_SECRET = { name: 'UNRELATED_SERVICE_TOKEN', value: 'unrelated-secret-value-123456' };

/** One prepared call: the runner, the request, and where the fake records what it saw. */
export interface PreparedCall {
  readonly runner: AgentRunner;
  readonly request: AgentRunRequest;
  readonly pidFile: string;
  readonly recordFile: string;
  readonly transcriptDir: string;
}

/** Options for {@link prepareFakeCall}. */
export interface FakeCallOptions {
  readonly behaviour: FakeBehaviour;
  /** Builds the runner from the runtime env and the scenario variable name it must allow. */
  readonly create: (setup: RunnerSetup) => AgentRunner;
  /** The auth variable the adapter passes through; its value is echoed by the fake and must be redacted. */
  readonly authEnv: string;
  readonly timeoutMs?: number;
  readonly outputBytes?: number;
  readonly extraScenario?: Record<string, unknown>;
  readonly binary?: string;
}

/** What a harness needs to build a runner against the fake CLIs. */
export interface RunnerSetup {
  readonly env: Record<string, string>;
  readonly envAllow: string[];
  readonly killGraceMs: number;
  readonly transcriptDir: string;
  readonly binary?: string;
  readonly workDir: string;
  readonly behaviour: FakeBehaviour;
  readonly pidFile: string;
  readonly recordFile: string;
}

/** Writes a scenario file, a working directory and a runtime env with the fakes first on PATH. */
export async function prepareFakeCall(options: FakeCallOptions): Promise<PreparedCall> {
  const root = await mkdtemp(join(tmpdir(), 'al-agent-'));
  const cwd = join(root, 'repo');
  await mkdir(cwd);
  const pidFile = join(root, 'pid.json');
  const recordFile = join(root, 'record.json');
  const transcriptDir = join(root, 'transcripts');
  const scenarioFile = join(root, 'scenario.json');
  const scenario = {
    behaviour: options.behaviour,
    pidFile,
    recordFile,
    echoEnv: options.authEnv,
    write: { 'src/hello.txt': 'hello from the agent\n' },
    ...(options.outputBytes === undefined ? {} : { outputBytes: options.outputBytes }),
    ...options.extraScenario,
  };
  await writeFile(scenarioFile, JSON.stringify(scenario));
  const env: Record<string, string> = {
    PATH: `${FAKE_AGENTS_DIR}${delimiter}${process.env['PATH'] ?? ''}`,
    HOME: root,
    FAKE_AGENT_SCENARIO: scenarioFile,
    [options.authEnv]: 'sk-test-auth-secret-value-0123456789',
    [UNRELATED_SECRET.name]: UNRELATED_SECRET.value,
  };
  const setup: RunnerSetup = {
    env,
    envAllow: ['FAKE_AGENT_SCENARIO'],
    killGraceMs: 300,
    transcriptDir,
    workDir: root,
    behaviour: options.behaviour,
    pidFile,
    recordFile,
    ...(options.binary === undefined ? {} : { binary: options.binary }),
  };
  const request: AgentRunRequest = {
    prompt: `Implement the greeting.\nWrite your result to ${join(root, 'result.json')}.\n`,
    cwd,
    phase: 'implement',
    resultFile: join(root, 'results', '1-implement.json'),
    timeoutMs: options.timeoutMs ?? 20_000,
    transcriptDir,
  };
  return { runner: options.create(setup), request, pidFile, recordFile, transcriptDir };
}

/** How one adapter is exercised by {@link describeAgentRunner}. */
export interface AgentRunnerHarness {
  readonly name: string;
  readonly create: (setup: RunnerSetup) => AgentRunner;
  readonly authEnv: string;
  /** Whether the CLI prints a final report whose absence is `no_final_result`. */
  readonly hasFinalResult: boolean;
  /** Usage the fake reports on success, as the adapter must read it. */
  readonly expectedUsage: { readonly costUsd: number | undefined; readonly tokens: TokenUsage | undefined };
  /** Whether the agent records how it was called (prompt, env) and echoes its auth variable; default true. */
  readonly recordsCall?: boolean;
  /** Cases the agent cannot act out (the replay agent spawns no grandchild and prints no 50 MB). */
  readonly skip?: readonly ('truncated' | 'grandchild' | 'huge-output')[];
}

async function readPids(pidFile: string): Promise<{ pid: number; grandchild?: number }> {
  return JSON.parse(await readFile(pidFile, 'utf8')) as { pid: number; grandchild?: number };
}

function isPidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The conformance suite every agent adapter passes against its fake CLI: happy path (files, prompt, minimal
 * environment, redacted transcript, usage), failure exit, truncated output, timeout and abort (no process of
 * the tree survives), a grandchild that ignores SIGTERM, a missing binary, and 50 MB of output.
 */
export function describeAgentRunner(harness: AgentRunnerHarness): void {
  const prepare = (behaviour: FakeBehaviour, extra: Partial<FakeCallOptions> = {}): Promise<PreparedCall> =>
    prepareFakeCall({ behaviour, create: harness.create, authEnv: harness.authEnv, ...extra });

  const skips = new Set(harness.skip ?? []);
  describe(`AgentRunner conformance: ${harness.name}`, () => {
    it('runs the agent: files written, prompt delivered, minimal env, redacted transcript, usage read', async () => {
      const call = await prepare('success');
      const result = await call.runner.run(call.request);
      expect(result.outcome).toBe('ok');
      expect(result.exitCode).toBe(0);
      expect(await readFile(join(call.request.cwd, 'src/hello.txt'), 'utf8')).toBe('hello from the agent\n');
      const transcript = await readFile(result.transcriptPath, 'utf8');
      expect(transcript).toContain('outcome: ok');
      expectCost(result.costUsd, harness.expectedUsage.costUsd);
      expect(result.tokens).toEqual(harness.expectedUsage.tokens);
      if (harness.recordsCall === false) return;
      const record = JSON.parse(await readFile(call.recordFile, 'utf8')) as {
        prompt: string;
        env: string[];
        cwd: string;
      };
      expect(record.prompt).toContain('Implement the greeting.');
      expect(record.env).toContain(harness.authEnv);
      expect(record.env).not.toContain(UNRELATED_SECRET.name);
      const allowed = new Set([...BASE_ENV_NAMES, harness.authEnv, 'FAKE_AGENT_SCENARIO', PROCESS_MARKER]);
      expect(record.env.filter((name) => !allowed.has(name))).toEqual([]);
      expect(transcript).toContain('debug: key');
      expect(transcript).not.toContain('sk-test-auth-secret-value-0123456789');
    });

    it('reports a failing exit as failed, with its exit code', async () => {
      const call = await prepare('fail', { extraScenario: { exitCode: 7 } });
      const result = await call.runner.run(call.request);
      expect(result.outcome).toBe('failed');
      expect(result.exitCode).toBe(7);
      expect(result.costUsd).toBeUndefined();
    });

    it.skipIf(skips.has('truncated'))(
      'treats output cut off mid-line at exit 0 as the absence of a final result',
      async () => {
        const call = await prepare('truncated');
        const result = await call.runner.run(call.request);
        expect(result.outcome).toBe(harness.hasFinalResult ? 'no_final_result' : 'ok');
      },
    );

    it('kills the tree on timeout and leaves no process of its group behind', async () => {
      const call = await prepare('hang', { timeoutMs: 800 });
      const result = await call.runner.run(call.request);
      const pid = result.pid!;
      expect(result.outcome).toBe('timed_out');
      expect(result.exitCode).toBeNull();
      expect(isProcessGroupAlive(pid)).toBe(false);
      expect(() => process.kill(-pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }) as Error);
    });

    it.skipIf(skips.has('grandchild'))(
      'kills a grandchild that ignores SIGTERM (SIGKILL after the grace period)',
      async () => {
        const call = await prepare('grandchild-ignores-term', { timeoutMs: 1_000 });
        const result = await call.runner.run(call.request);
        const { pid, grandchild } = await readPids(call.pidFile);
        expect(result.outcome).toBe('timed_out');
        expect(isProcessGroupAlive(pid)).toBe(false);
        expect(grandchild).toBeDefined();
        expect(isPidAlive(grandchild!)).toBe(false);
      },
    );

    it('stops on abort, and does not start when already aborted', async () => {
      const call = await prepare('hang');
      const controller = new AbortController();
      const running = call.runner.run({ ...call.request, signal: controller.signal });
      if (harness.recordsCall === false) await new Promise((r) => setTimeout(r, 700));
      else await waitForFile(call.pidFile);
      controller.abort();
      const result = await running;
      expect(result.outcome).toBe('aborted');
      expect(result.pid).toBeDefined();
      expect(isProcessGroupAlive(result.pid!)).toBe(false);
      const early = await call.runner.run({ ...call.request, signal: AbortSignal.abort() });
      expect(early.outcome).toBe('aborted');
      expect(early.exitCode).toBeNull();
    });

    it('names a missing binary and how to install it', async () => {
      const call = await prepare('success', { binary: 'allium-no-such-agent' });
      const error: unknown = await call.runner.run(call.request).catch((e: unknown) => e);
      expect(AlliumLoopError.is(error)).toBe(true);
      const typed = error as AlliumLoopError;
      expect(typed.code).toBe('agents.binary_not_found');
      expect(typed.retryable).toBe(false);
      expect(typed.message).toContain('allium-no-such-agent');
      expect(typed.hint).toMatch(/install/i);
    });

    it.skipIf(skips.has('huge-output'))(
      'bounds what it keeps of 50 MB of output and still reads the final report',
      async () => {
        // A generous call limit: on a loaded two-core machine, piping 50 MB can take longer than the default 20 s.
        const call = await prepare('huge-output', { outputBytes: 50 * 1024 * 1024, timeoutMs: 120_000 });
        const result = await call.runner.run(call.request);
        expect(result.outcome).toBe('ok');
        expect(result.output?.stdoutBytes).toBeGreaterThanOrEqual(50 * 1024 * 1024);
        expect(result.output?.omittedBytes).toBeGreaterThan(45 * 1024 * 1024);
        expect((await stat(result.transcriptPath)).size).toBeLessThan(3 * 1024 * 1024);
        expectCost(result.costUsd, harness.expectedUsage.costUsd);
      },
    );
  });
}

async function waitForFile(path: string): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    if (
      await stat(path).then(
        () => true,
        () => false,
      )
    )
      return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${path}`);
}

/** Asserts a cost: `undefined` exactly (unknown is never zero), a number to 9 decimals. */
export function expectCost(actual: number | undefined, expected: number | undefined): void {
  if (expected === undefined) expect(actual).toBeUndefined();
  else expect(actual).toBeCloseTo(expected, 9);
}

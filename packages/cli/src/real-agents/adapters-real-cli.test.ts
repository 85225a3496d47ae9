import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgentRunner, type AgentRunResult } from '@allium-loop/agents';
import {
  GEMINI_SCRIPTED_MODEL,
  locateRealCli,
  startScriptedModel,
  type RealCliEnvOptions,
  type ScriptedCall,
  type ScriptedModelServer,
} from '@allium-loop/scripted-model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  REAL_CLIS,
  REAL_OPENCODE,
  agentConfigFor,
  announceSkips,
  envFor,
  useScriptedModel,
} from './real-agents.test-helpers.js';

announceSkips();

/** Every permission setting docs/agents.md offers, per CLI, as adapter options. */
const PERMISSION_SETTINGS: Record<string, Record<string, unknown>[]> = {
  claude: ['default', 'acceptEdits', 'plan', 'bypassPermissions', 'auto', 'dontAsk'].map((mode) => ({
    permissionMode: mode,
  })),
  codex: [
    { sandbox: 'read-only' },
    { sandbox: 'workspace-write' },
    { sandbox: 'danger-full-access' },
    { bypassSandbox: true },
  ],
};

/** Every other flag the adapters can build, in one call per CLI. */
const OTHER_FLAGS: Record<string, Record<string, unknown>> = {
  claude: {
    outputFormat: 'json',
    maxTurns: 5,
    model: 'claude-sonnet-4-5',
    allowedTools: ['Read', 'Write'],
    disallowedTools: ['WebFetch'],
  },
  codex: { skipGitRepoCheck: true, model: 'gpt-5.5' },
};

/** True when no process of the group `pgid` is left. */
function groupGone(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

describe.each(REAL_CLIS.map((cli) => [cli.name, cli] as const))(
  'the %s adapter against the real binary',
  { timeout: 300_000 },
  (name, cli) => {
    let server: ScriptedModelServer;
    let env: Record<string, string>;
    let counter = 0;
    beforeAll(async () => {
      server = await startScriptedModel();
      if (!('skipReason' in cli)) env = await envFor(name, server);
    });
    afterAll(async () => {
      await server?.close();
    });

    /** Runs one call whose prompt only `call` matches, with the adapter built from `options`. */
    async function runCall(
      call: Omit<ScriptedCall, 'match'>,
      options: Record<string, unknown> = {},
      timeoutMs = 240_000,
      callEnv: Record<string, string> = env,
    ): Promise<{ result: AgentRunResult; marker: string; cwd: string }> {
      counter += 1;
      const marker = `CALL-${name}-${String(counter)}`;
      server.setScript([{ ...call, match: marker }]);
      server.clearRequests();
      const cwd = await mkdtemp(join(tmpdir(), `allium-real-${name}-`));
      const runner = createAgentRunner(
        agentConfigFor(cli, { ...(name === 'codex' ? { skipGitRepoCheck: true } : {}), ...options }),
        { env: callEnv },
      );
      const result = await runner.run({
        prompt: `${marker}: answer briefly.`,
        cwd,
        phase: 'implement',
        resultFile: join(cwd, '.allium-loop', 'x', 'results', '1-implement.json'),
        timeoutMs,
      });
      return { result, marker, cwd };
    }

    it.skipIf('skipReason' in cli).each(PERMISSION_SETTINGS[name]!)(
      'accepts the argv it builds with %o',
      async (setting) => {
        const { result } = await runCall({ finalText: 'fine' }, setting);
        const transcript = await readFile(result.transcriptPath, 'utf8');
        expect(result.outcome, transcript.slice(-2000)).toBe('ok');
        expect(result.exitCode).toBe(0);
        expect(transcript).not.toMatch(/unknown option|unexpected argument|unrecognized/i);
      },
    );

    it.skipIf('skipReason' in cli)('accepts the argv of every other option it has', async () => {
      const { result } = await runCall({ finalText: 'fine' }, OTHER_FLAGS[name]);
      const transcript = await readFile(result.transcriptPath, 'utf8');
      expect(result.outcome, transcript.slice(-2000)).toBe('ok');
    });

    it.skipIf('skipReason' in cli)(
      'reports the tokens the server sent (cache reads and writes too) and the CLI’s own cost',
      async () => {
        const usage = { input: 1000, output: 100, cacheRead: 300, cacheWrite: name === 'claude' ? 50 : 0 };
        const { result } = await runCall(
          { actions: [{ kind: 'shell', command: 'true' }], usage, finalText: 'x' },
          {
            prices: { 'gpt-5.5': { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 } },
          },
        );
        expect(result.outcome).toBe('ok');
        // Two model turns: the shell call and the final text.
        const expected = {
          input: 2 * usage.input,
          output: 2 * usage.output,
          cacheRead: 2 * usage.cacheRead,
          ...(name === 'claude' ? { cacheWrite: 2 * usage.cacheWrite } : {}),
        };
        expect(result.tokens).toEqual(expected);
        if (name === 'claude') {
          const transcript = await readFile(result.transcriptPath, 'utf8');
          const printed = Number(/"total_cost_usd":([0-9.e-]+)/.exec(transcript)?.[1]);
          expect(printed).toBeGreaterThan(0);
          expect(result.costUsd).toBe(printed);
        } else {
          expect(result.costUsd).toBeCloseTo((2000 * 2 + 200 * 8 + 600 * 0.5) / 1_000_000, 12);
        }
      },
    );

    it.skipIf('skipReason' in cli)(
      'a stalled stream: the call is killed at its timeout and no process of its group survives',
      async () => {
        const { result } = await runCall({ fault: { kind: 'stall' } }, { killGraceMs: 2_000 }, 15_000);
        expect(result.outcome).toBe('timed_out');
        expect(result.pid).toBeGreaterThan(0);
        expect(groupGone(result.pid!)).toBe(true);
        expect(server.requests.at(-1)?.fault).toBe('stall');
      },
    );

    it.skipIf('skipReason' in cli)(
      'HTTP 429 with retry-after: the call ends rate_limited, not failed',
      async () => {
        const { result } = await runCall({ fault: { kind: 'rate_limit', retryAfterSeconds: 7 } });
        expect(result.outcome).toBe('rate_limited');
        expect(server.requests.filter((r) => r.fault === 'rate_limit').length).toBeGreaterThan(0);
      },
    );

    it.skipIf('skipReason' in cli)(
      'HTTP 429 the CLI’s own retry gets past: the call is ok, no rate limit reported',
      async () => {
        const retrying = await envFor(name, server, { retries: 2 });
        const { result } = await runCall(
          { fault: { kind: 'rate_limit', retryAfterSeconds: 1, times: 1 }, finalText: 'fine' },
          {},
          240_000,
          retrying,
        );
        const transcript = await readFile(result.transcriptPath, 'utf8');
        expect(result.outcome, transcript.slice(-2000)).toBe('ok');
        expect(result.rateLimitResetAt).toBeUndefined();
        // The CLI met the 429 and asked again.
        const mine = server.requests.filter((r) => r.callIndex === 0);
        expect(mine.map((r) => r.fault ?? r.reply)).toEqual(['rate_limit', 'text']);
      },
    );

    it.skipIf('skipReason' in cli)(
      'HTTP 429 the CLI gives up on after its own retries: rate_limited, with the wait it announced when it shows one',
      async () => {
        const retrying = await envFor(name, server, { retries: 1 });
        const started = Date.now();
        const { result } = await runCall(
          { fault: { kind: 'rate_limit', retryAfterSeconds: 2 } },
          {},
          240_000,
          retrying,
        );
        expect(result.outcome).toBe('rate_limited');
        expect(server.requests.filter((r) => r.callIndex === 0).map((r) => r.fault)).toEqual([
          'rate_limit',
          'rate_limit',
        ]);
        if (name === 'claude') {
          // Claude Code announces its wait (retry-after, plus jitter) in an api_retry event: the reset lies that far
          // after the result line.
          const transcript = await readFile(result.transcriptPath, 'utf8');
          const announced = Number(/"retry_delay_ms":(\d+)/.exec(transcript)?.[1]);
          expect(announced).toBeGreaterThanOrEqual(2_000);
          expect(result.rateLimitResetAt).toBeGreaterThanOrEqual(started + announced);
        } else {
          // Codex prints no retry-after ("exceeded retry limit, last status: 429"): the engine waits its default.
          expect(result.detail).toMatch(/429/);
          expect(result.rateLimitResetAt).toBeUndefined();
        }
      },
    );

    it.skipIf('skipReason' in cli)(
      'HTTP 401: an api_error whose detail names the CLI’s own key variable',
      async () => {
        const { result } = await runCall({ fault: { kind: 'unauthorized' } });
        expect(result.outcome).toBe('api_error');
        expect(result.detail).toMatch(name === 'claude' ? /ANTHROPIC_API_KEY/ : /OPENAI_API_KEY/);
        expect(result.detail).toMatch(/401|Invalid API key/i);
      },
    );

    it.skipIf('skipReason' in cli)('HTTP 500 and a malformed stream: the call fails, never ok', async () => {
      for (const kind of ['server_error', 'malformed_sse'] as const) {
        const { result } = await runCall({ fault: { kind } });
        expect(result.outcome, kind).not.toBe('ok');
        expect(['api_error', 'failed', 'no_final_result']).toContain(result.outcome);
      }
    });
  },
);

describe.skipIf('skipReason' in REAL_OPENCODE)(
  'the opencode adapter against the real binary (one call: the demo is too slow for CI with it)',
  { timeout: 600_000 },
  () => {
    const model = useScriptedModel();

    it('writes, edits and runs a command with its own tools; tokens are the server’s, cost is what it printed', async () => {
      model().setScript([
        {
          match: 'OPENCODE-CALL',
          actions: [
            { kind: 'write', path: 'src/a.txt', content: 'one\ntwo\n' },
            { kind: 'edit', path: 'src/a.txt', oldText: 'two\n', newText: 'three\n' },
            { kind: 'shell', command: 'cat src/a.txt > copy.txt' },
          ],
          usage: { input: 900, output: 60, cacheRead: 100 },
          finalText: 'done',
        },
      ]);
      const cwd = await mkdtemp(join(tmpdir(), 'allium-real-opencode-'));
      const runner = createAgentRunner(agentConfigFor(REAL_OPENCODE), {
        env: await envFor('opencode', model()),
      });
      const result = await runner.run({
        prompt: 'OPENCODE-CALL: answer briefly.',
        cwd,
        phase: 'implement',
        resultFile: join(cwd, '.allium-loop', 'x', 'results', '1-implement.json'),
        timeoutMs: 500_000,
      });
      const transcript = await readFile(result.transcriptPath, 'utf8');
      expect(result.outcome, transcript.slice(-2000)).toBe('ok');
      expect(await readFile(join(cwd, 'copy.txt'), 'utf8')).toBe('one\nthree\n');
      const played = model()
        .requests.filter((r) => r.callIndex === 0)
        .map((r) => r.reply);
      expect(played).toEqual(['read', 'write', 'read', 'edit', 'bash', 'text']);
      const reported = model().usageOfCall(0);
      expect(result.tokens).toEqual({
        input: reported.input,
        output: reported.output,
        cacheRead: reported.cacheRead,
        cacheWrite: 0,
      });
      const printed = [...transcript.matchAll(/"type":"step_finish".*?"cost":([0-9.e-]+)/g)].map((m) =>
        Number(m[1]),
      );
      expect(printed.length).toBe(6);
      expect(result.costUsd).toBeCloseTo(
        printed.reduce((a, b) => a + b, 0),
        12,
      );
    });
  },
);

const REAL_GEMINI = locateRealCli('gemini');
if ('skipReason' in REAL_GEMINI) console.warn(`SKIPPED real gemini tests: ${REAL_GEMINI.skipReason}`);

describe.skipIf('skipReason' in REAL_GEMINI)(
  'the gemini adapter against the real binary (Gemini API through GOOGLE_GEMINI_BASE_URL)',
  { timeout: 600_000 },
  () => {
    const model = useScriptedModel();
    let counter = 0;

    async function runGemini(
      call: Omit<ScriptedCall, 'match'>,
      options: Record<string, unknown> = {},
      envOptions: RealCliEnvOptions = {},
    ) {
      counter += 1;
      const marker = `GEMINI-CALL-${String(counter)}`;
      model().setScript([{ ...call, match: marker }]);
      model().clearRequests();
      const cwd = await mkdtemp(join(tmpdir(), 'allium-real-gemini-'));
      const runner = createAgentRunner(agentConfigFor(REAL_GEMINI, options), {
        env: await envFor('gemini', model(), envOptions),
      });
      const result = await runner.run({
        prompt: `${marker}: answer briefly.`,
        cwd,
        phase: 'implement',
        resultFile: join(cwd, '.allium-loop', 'x', 'results', '1-implement.json'),
        timeoutMs: 500_000,
      });
      return { result, cwd, transcript: await readFile(result.transcriptPath, 'utf8') };
    }

    it.each(['default', 'auto_edit', 'yolo', 'plan'])(
      'accepts the argv it builds with approvalMode %s',
      async (approvalMode) => {
        const { result, transcript } = await runGemini({ finalText: 'fine' }, { approvalMode });
        expect(result.outcome, transcript.slice(-2000)).toBe('ok');
        expect(result.exitCode).toBe(0);
        expect(transcript).not.toMatch(/unknown argument|unknown option|invalid values/i);
        // The main turn reached the scripted model, under the model the adapter named.
        const main = model().requests.filter((r) => r.callIndex === 0);
        expect(main.map((r) => r.reply)).toEqual(['text']);
        expect(main[0]!.path).toBe(`/v1beta/models/${GEMINI_SCRIPTED_MODEL}:streamGenerateContent`);
      },
    );

    it('HTTP 429 its own retry gets past: the call is ok, no rate limit reported', async () => {
      const { result, transcript } = await runGemini({
        fault: { kind: 'rate_limit', retryAfterSeconds: 1, times: 1 },
        finalText: 'fine',
      });
      expect(result.outcome, transcript.slice(-2000)).toBe('ok');
      expect(result.rateLimitResetAt).toBeUndefined();
      const mine = model().requests.filter((r) => r.callIndex === 0);
      expect(mine.map((r) => r.fault ?? r.reply)).toEqual(['rate_limit', 'text']);
    });

    it('HTTP 429 it gives up on after its attempts: rate_limited, reset at the retry delay it suggests', async () => {
      // Three attempts (`general.maxAttempts` in its settings): its default of ten backs off for about four minutes
      // before it gives up the same way, which made this one test the longest of the suite.
      const started = Date.now();
      const { result, transcript } = await runGemini(
        { fault: { kind: 'rate_limit', retryAfterSeconds: 1 } },
        {},
        { retries: 2 },
      );
      expect(result.outcome, transcript.slice(-3000)).toBe('rate_limited');
      expect(model().requests.filter((r) => r.fault === 'rate_limit').length).toBe(3);
      // "Suggested retry after 1s." on its stderr, counted from the end of the call.
      expect(result.rateLimitResetAt).toBeGreaterThanOrEqual(started + 1_000);
    });

    it('writes, edits and runs a command with its own tools; tokens are the server’s, cost is priced by the engine', async () => {
      const usage = { input: 900, output: 60, cacheRead: 100 };
      const price = { inputPerMTok: 1, outputPerMTok: 4, cacheReadPerMTok: 0.25 };
      const { result, cwd, transcript } = await runGemini(
        {
          actions: [
            { kind: 'write', path: 'src/a.txt', content: 'one\ntwo\n' },
            { kind: 'edit', path: 'src/a.txt', oldText: 'two\n', newText: 'three\n' },
            { kind: 'shell', command: 'cat src/a.txt > copy.txt' },
          ],
          usage,
          finalText: 'done',
        },
        // yolo: Gemini asks before a shell command in every other mode, and -p has nobody to ask.
        { approvalMode: 'yolo', prices: { [GEMINI_SCRIPTED_MODEL]: price } },
      );
      expect(result.outcome, transcript.slice(-2000)).toBe('ok');
      expect(await readFile(join(cwd, 'src/a.txt'), 'utf8')).toBe('one\nthree\n');
      expect(await readFile(join(cwd, 'copy.txt'), 'utf8')).toBe('one\nthree\n');
      const played = model()
        .requests.filter((r) => r.callIndex === 0)
        .map((r) => r.reply);
      expect(played).toEqual(['write_file', 'replace', 'run_shell_command', 'text']);
      const reported = model().usageOfCall(0);
      expect(result.tokens).toEqual({
        input: reported.input,
        output: reported.output,
        cacheRead: reported.cacheRead,
      });
      expect(result.costUsd).toBeCloseTo(
        (reported.input * price.inputPerMTok +
          reported.output * price.outputPerMTok +
          reported.cacheRead * price.cacheReadPerMTok) /
          1_000_000,
        12,
      );
    });
  },
);

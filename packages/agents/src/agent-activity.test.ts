import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { readRecording } from '@allium-loop/scripted-model';
import { describe, expect, it } from 'vitest';
import {
  createActivityTracker,
  readClaudeActivity,
  readCodexActivity,
  type ActivityUpdate,
  type AgentActivity,
} from './agent-activity.js';
import { createClaudeAgentRunner, createClaudeParser } from './claude-agent.js';
import { createCodexParser } from './codex-agent.js';
import { prepareFakeCall } from './describe-agent-runner.test-helpers.js';
import { DEFAULT_PRICE_TABLE } from './price-table.js';
import type { ProcessRunResult } from './process-runner.js';

const NO_RUN = {} as ProcessRunResult;

/** Folds recorded events through a reader and a tracker (recorded paths live under `/tmp/X`). */
function replay(
  events: readonly Record<string, unknown>[],
  read: (event: Record<string, unknown>) => ActivityUpdate | undefined,
  model?: string,
): AgentActivity[] {
  const seen: AgentActivity[] = [];
  const track = createActivityTracker({
    cwd: '/tmp/X',
    prices: DEFAULT_PRICE_TABLE,
    redact: (text) => text,
    onActivity: (activity) => seen.push(activity),
  });
  for (const event of events) {
    const update = read(event);
    if (update === undefined) continue;
    track(
      update.usage === undefined || model === undefined
        ? update
        : { ...update, usage: { ...update.usage, model } },
    );
  }
  return seen;
}

describe('activity read from recordings of the real CLIs', () => {
  it('claude stream-json: each tool in use, relative to the working directory, and the tokens so far', () => {
    const seen = replay(readRecording('claude-stream-json.jsonl'), readClaudeActivity);
    expect(seen.map((a) => a.tool)).toEqual([
      'Read hello.txt',
      'Write hello.txt',
      'Bash cat hello.txt',
      'Bash cat hello.txt',
    ]);
    // Four model responses of 1200 input and 1 output token each, as the recording streams them.
    expect(seen.map((a) => a.tokens)).toEqual([1201, 2402, 3603, 4804]);
    // The recorded model has no price in the table: the estimate stays unknown, never zero.
    expect(seen.every((a) => a.costUsd === undefined)).toBe(true);
  });

  it('codex --json: the file change, the command (without its login-shell wrapper) and the turn usage', () => {
    const seen = replay(readRecording('codex-json.jsonl'), readCodexActivity, 'gpt-5');
    expect(seen.map((a) => a.tool)).toEqual(['add hello.txt', 'shell cat hello.txt', 'shell cat hello.txt']);
    expect(seen.at(-1)?.tokens).toBe(3600 + 240);
    expect(seen.at(-1)?.costUsd).toBeGreaterThan(0);
  });

  it('the final reports stay what they were when activity is read alongside', () => {
    for (const [events, parser, plain] of [
      [
        readRecording('claude-stream-json.jsonl'),
        createClaudeParser(
          () => 0,
          () => undefined,
        ),
        createClaudeParser(() => 0),
      ],
      [
        readRecording('codex-json.jsonl'),
        createCodexParser('gpt-5', DEFAULT_PRICE_TABLE, () => undefined),
        createCodexParser('gpt-5', DEFAULT_PRICE_TABLE),
      ],
    ] as const) {
      for (const event of events) {
        parser.onLine(JSON.stringify(event));
        plain.onLine(JSON.stringify(event));
      }
      expect(parser.finish(NO_RUN)).toEqual(plain.finish(NO_RUN));
    }
  });
});

describe('the activity readers and tracker', () => {
  it('counts a Claude message once however many content blocks repeat its usage, and prices known models', () => {
    const message = (id: string, content: unknown[], output: number) => ({
      type: 'assistant',
      message: {
        id,
        model: 'claude-sonnet-4',
        content,
        usage: { input_tokens: 1000, output_tokens: output },
      },
    });
    const seen = replay(
      [
        message('m1', [{ type: 'text', text: 'thinking' }], 5),
        message('m1', [{ type: 'tool_use', name: 'Edit', input: { file_path: '/tmp/X/src/x.ts' } }], 20),
        message('m2', [{ type: 'tool_use', name: 'TodoWrite', input: { todos: [] } }], 10),
      ],
      readClaudeActivity,
    );
    expect(seen.map((a) => [a.tool, a.tokens])).toEqual([
      [undefined, 1005],
      ['Edit src/x.ts', 1020],
      ['TodoWrite', 2030],
    ]);
    expect(seen.at(-1)?.costUsd).toBeCloseTo((2000 * 3 + 30 * 15) / 1_000_000, 9);
  });

  it('shows one printable, redacted, bounded line: no escape codes or newlines from the agent reach the terminal', () => {
    const seen: AgentActivity[] = [];
    const track = createActivityTracker({
      cwd: '/w',
      prices: DEFAULT_PRICE_TABLE,
      redact: (text) => text.replaceAll('sk-secret', '[redacted]'),
      onActivity: (a) => seen.push(a),
    });
    track({ tool: { name: 'Bash', target: 'echo \u001b[2J\u001b]0;x\u0007 sk-secret\nrm -rf /' } });
    track({ tool: { name: 'Bash', target: `echo ${'y'.repeat(500)}` } });
    expect(seen[0]?.tool).toBe('Bash echo [2J ]0;x sk-secret'.replace('sk-secret', '[redacted]'));
    expect(seen[0]?.tool).not.toMatch(/[\u0000-\u001f]/);
    expect(seen[1]?.tool).toHaveLength(80);
    expect(seen[1]?.tool?.endsWith('…')).toBe(true);
  });

  it('says nothing for events without activity, and nothing again when nothing changed', () => {
    expect(readClaudeActivity({ type: 'user', message: { content: [] } })).toBeUndefined();
    expect(readClaudeActivity({ type: 'result', usage: { input_tokens: 1 } })).toBeUndefined();
    expect(
      readCodexActivity({ type: 'item.completed', item: { type: 'agent_message', text: 'x' } }),
    ).toBeUndefined();
    expect(readCodexActivity({ type: 'item.started', item: { type: 'reasoning' } })).toBeUndefined();
    const seen = replay(
      [
        { type: 'item.started', item: { type: 'mcp_tool_call', server: 'fs', tool: 'read' } },
        { type: 'turn.started' },
      ],
      readCodexActivity,
    );
    expect(seen).toEqual([{ tool: 'fs.read' }]);
  });
});

/**
 * A stand-in `claude` that prints a tool call, then waits for `release` before finishing, with a line longer than
 * the capture's line limit (and no newline for most of it) in between.
 */
const SLOW_CLAUDE = `#!/usr/bin/env node
import { existsSync } from 'node:fs';
const release = process.env.RELEASE_FILE;
const out = (value) => process.stdout.write(JSON.stringify(value) + '\\n');
process.stdin.resume();
process.stdin.on('end', () => {
  out({ type: 'system', subtype: 'init', session_id: 's1' });
  process.stdout.write('{"type":"assistant","junk":"' + 'x'.repeat(3 * 1024 * 1024));
  process.stdout.write('"}\\n');
  out({ type: 'assistant', message: { id: 'm1', content: [{ type: 'tool_use', name: 'Edit', input: { file_path: process.cwd() + '/src/x.ts' } }], usage: { input_tokens: 3000, output_tokens: 200 } } });
  const wait = () => {
    if (!existsSync(release)) return void setTimeout(wait, 50);
    out({ type: 'result', subtype: 'success', is_error: false, num_turns: 1, result: 'Done.', session_id: 's1', total_cost_usd: 0.04, usage: { input_tokens: 3000, output_tokens: 200 } });
  };
  wait();
});
`;

describe('activity while the call runs (process runner delivering lines as they arrive)', () => {
  it('reports the tool in use before the CLI exits; an over-long line is skipped, not buffered', async () => {
    const root = await mkdtemp(join(tmpdir(), 'al-activity-'));
    const binary = join(root, 'claude');
    await writeFile(binary, SLOW_CLAUDE);
    await chmod(binary, 0o755);
    const release = join(root, 'release');
    const cwd = await mkdtemp(join(tmpdir(), 'al-activity-cwd-'));
    let resolveSeen: (activity: AgentActivity) => void = () => undefined;
    const firstTool = new Promise<AgentActivity>((resolve) => (resolveSeen = resolve));
    const runner = createClaudeAgentRunner(
      {
        kind: 'claude',
        binary,
        envAllow: ['RELEASE_FILE'],
        capture: { maxLineBytes: 1024 * 1024 },
        transcriptDir: join(root, 'transcripts'),
      },
      {
        env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, RELEASE_FILE: release },
        onActivity: (activity) => {
          if (activity.tool !== undefined) resolveSeen(activity);
        },
      },
    );
    const call = runner.run({
      prompt: 'p',
      cwd,
      phase: 'implement',
      resultFile: join(cwd, 'result.json'),
      timeoutMs: 600_000,
    });
    let ended = false;
    void call.then(() => (ended = true));
    const seen = await firstTool;
    expect(ended).toBe(false);
    expect(seen).toEqual({ tool: 'Edit src/x.ts', tokens: 3200 });
    await writeFile(release, '');
    const result = await call;
    expect(result.outcome).toBe('ok');
    expect(result.costUsd).toBe(0.04);
  });
});

describe('activity over a long stream', () => {
  it('follows 20 MB of streamed events (tens of thousands) with running totals, and the report is unchanged', async () => {
    let updates = 0;
    let latest: AgentActivity | undefined;
    const call = await prepareFakeCall({
      behaviour: 'huge-output',
      outputBytes: 20 * 1024 * 1024,
      authEnv: 'ANTHROPIC_API_KEY',
      timeoutMs: 600_000,
      create: (setup) =>
        createClaudeAgentRunner(
          { kind: 'claude', envAllow: setup.envAllow, killGraceMs: setup.killGraceMs },
          {
            env: setup.env,
            onActivity: (activity) => {
              updates += 1;
              latest = activity;
            },
          },
        ),
    });
    const result = await call.runner.run(call.request);
    expect(result.outcome).toBe('ok');
    expect(result.costUsd).toBe(0.0123);
    // One output token per streamed event of about 1 KiB, each counted once.
    expect(updates).toBeGreaterThan(15_000);
    expect(latest?.tokens).toBe(updates);
  });
});

import { spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildClaudeArgs, buildCodexArgs, type AgentRunRequest } from '@allium-loop/agents';
import {
  RECORDINGS_DIR,
  parseJsonLines,
  readRecording,
  shapeDrift,
  startScriptedModel,
  type RecordingName,
  type ScriptedModelServer,
} from '@allium-loop/scripted-model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REAL_CLIS, agentConfigFor, announceSkips, cliPath, envFor } from './real-agents.test-helpers.js';

announceSkips();

/** Set `UPDATE_RECORDINGS=1` to rewrite the recordings from the pinned binaries instead of checking them. */
const UPDATE = process.env['UPDATE_RECORDINGS'] === '1';

/** The event kinds the adapters read: both the recording and a fresh run must have them. */
export const REQUIRED_KINDS: Record<RecordingName, string[]> = {
  'claude-stream-json.jsonl': ['system/init', 'result/success', 'assistant'],
  'claude-json.jsonl': ['result/success'],
  'codex-json.jsonl': ['thread.started', 'turn.completed', 'item.completed/agent_message'],
};

const CASES: { recording: RecordingName; cli: 'claude' | 'codex'; options: Record<string, unknown> }[] = [
  { recording: 'claude-stream-json.jsonl', cli: 'claude', options: { outputFormat: 'stream-json' } },
  { recording: 'claude-json.jsonl', cli: 'claude', options: { outputFormat: 'json' } },
  { recording: 'codex-json.jsonl', cli: 'codex', options: { skipGitRepoCheck: true } },
];

/** Stable text: temporary paths, ids and timings replaced, so a re-recording shows only real changes. */
function scrub(text: string): string {
  return text
    .replace(/\/tmp\/[A-Za-z0-9._-]+/g, '/tmp/X')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '00000000-0000-0000-0000-000000000000')
    .replace(/"(timestamp)":"[^"]+"/g, '"$1":"2026-01-01T00:00:00.000Z"')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
}

describe('recordings of the real CLIs’ output (what the fakes are checked against)', { timeout: 300_000 }, () => {
  let server: ScriptedModelServer;
  beforeAll(async () => {
    server = await startScriptedModel();
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const { recording, cli: name, options } of CASES) {
    const cli = REAL_CLIS.find((c) => c.name === name)!;
    it.skipIf('skipReason' in cli)(
      `${recording}: a fresh run of the pinned ${name} has the recorded shape`,
      async () => {
        server.setScript([
          {
            match: `RECORD ${recording}`,
            actions: [
              { kind: 'write', path: 'hello.txt', content: 'hello\n' },
              { kind: 'shell', command: 'cat hello.txt' },
            ],
            finalText: 'Recorded.',
          },
        ]);
        const cwd = await mkdtemp(join(tmpdir(), 'allium-record-'));
        const request: AgentRunRequest = {
          prompt: `RECORD ${recording}`,
          cwd,
          phase: 'implement',
          resultFile: join(cwd, 'result.json'),
          timeoutMs: 120_000,
        };
        const config = agentConfigFor(cli, options);
        const args =
          name === 'claude'
            ? buildClaudeArgs(config as never, request)
            : buildCodexArgs(config as never, request, { scratchDir: cwd, promptFile: join(cwd, 'p.md') });
        const env = await envFor(name, server);
        const child = spawn(cliPath(cli), args, { cwd, env, stdio: ['pipe', 'pipe', 'inherit'] });
        child.stdin.end(request.prompt);
        let stdout = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
        expect(code, stdout.slice(-2000)).toBe(0);
        const fresh = parseJsonLines(scrub(stdout));
        if (UPDATE) {
          await writeFile(join(RECORDINGS_DIR, recording), `${fresh.map((e) => JSON.stringify(e)).join('\n')}\n`);
          return;
        }
        const recorded = readRecording(recording);
        // Both ways over the kinds the adapters read: the recording is what the binary prints today.
        const kinds = REQUIRED_KINDS[recording];
        const only = (events: readonly Record<string, unknown>[]) =>
          events.filter((e) => kinds.some((k) => [e['type'], e['subtype']].filter(Boolean).join('/').startsWith(k.split('/')[0]!)));
        expect(shapeDrift(only(fresh), only(recorded), kinds)).toEqual([]);
        expect(shapeDrift(only(recorded), only(fresh), kinds)).toEqual([]);
      },
    );
  }
});

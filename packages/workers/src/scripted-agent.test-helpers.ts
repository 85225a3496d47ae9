import type { AgentRunner } from '@allium-loop/agents';
import { execa } from 'execa';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One step of a scripted agent (see test-fixtures/scripted-agent.mjs). */
export type ScriptStep =
  | { readonly op: 'write'; readonly path: string; readonly text: string }
  | { readonly op: 'replace'; readonly path: string; readonly find: string; readonly with: string }
  | { readonly op: 'delete'; readonly path: string }
  | { readonly op: 'result'; readonly json: unknown }
  | { readonly op: 'exit'; readonly code: number };

const SCRIPT = new URL('../test-fixtures/scripted-agent.mjs', import.meta.url).pathname;

/**
 * A minimal AgentRunner that runs the scripted agent as a real child process (prompt on stdin, result path in
 * `ALLIUM_RESULT_FILE`), standing in until `@allium-loop/agents` exports its `command`/`replay` adapters.
 */
export async function scriptedAgent(steps: readonly ScriptStep[]): Promise<AgentRunner> {
  const dir = await mkdtemp(join(tmpdir(), 'allium-script-'));
  const scenario = join(dir, 'scenario.json');
  await writeFile(scenario, JSON.stringify(steps));
  return {
    name: 'scripted',
    async run(request) {
      const started = Date.now();
      const child = await execa('node', [SCRIPT, scenario], {
        cwd: request.cwd,
        input: request.prompt,
        env: { ALLIUM_RESULT_FILE: request.resultFile },
        timeout: request.timeoutMs,
        reject: false,
      });
      const transcriptPath = join(dir, 'transcript.txt');
      await writeFile(transcriptPath, `${child.stdout}\n${child.stderr}`);
      return {
        outcome: child.exitCode === 0 ? 'ok' : child.timedOut ? 'timed_out' : 'failed',
        exitCode: child.exitCode ?? null,
        signal: child.signal ?? null,
        durationMs: Date.now() - started,
        transcriptPath,
      };
    },
  };
}

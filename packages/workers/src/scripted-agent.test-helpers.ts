import { createCommandAgentRunner, type AgentRunner } from '@allium-loop/agents';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One step of a scripted agent (see test-fixtures/scripted-agent.mjs). */
export type ScriptStep =
  | { readonly op: 'write'; readonly path: string; readonly text: string }
  | { readonly op: 'replace'; readonly path: string; readonly find: string; readonly with: string }
  | { readonly op: 'delete'; readonly path: string }
  | { readonly op: 'result'; readonly json: unknown }
  | { readonly op: 'loop'; readonly json: unknown }
  | { readonly op: 'exit'; readonly code: number };

const SCRIPT = new URL('../test-fixtures/scripted-agent.mjs', import.meta.url).pathname;

/**
 * An AgentRunner that plays `steps` through the real `command` adapter of `@allium-loop/agents`: the scripted
 * agent runs as a child process in its own process group, gets the prompt on stdin and the result path as
 * `{result_file}`, exactly as a configured `command` agent would.
 */
export async function scriptedAgent(steps: readonly ScriptStep[]): Promise<AgentRunner> {
  const dir = await mkdtemp(join(tmpdir(), 'allium-script-'));
  const scenario = join(dir, 'scenario.json');
  await writeFile(scenario, JSON.stringify(steps));
  return createCommandAgentRunner({
    kind: 'command',
    argv: [process.execPath, SCRIPT, scenario, '{result_file}'],
    transcriptDir: join(dir, 'transcripts'),
    killGraceMs: 500,
  });
}

import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAgentRunner, type AgentActivity } from '@allium-loop/agents';
import { describe, expect, it } from 'vitest';
import {
  REAL_CLIS,
  agentConfigFor,
  announceSkips,
  envFor,
  useScriptedModel,
} from './real-agents.test-helpers.js';

announceSkips();

/** The tool descriptions each adapter reports for the scripted call below. */
const EXPECTED_TOOLS: Record<string, string[]> = {
  claude: ['Write hello.txt', 'Bash cat hello.txt'],
  codex: ['shell cat hello.txt'],
};

describe.each(REAL_CLIS.map((cli) => [cli.name, cli] as const))(
  'live activity from the real %s',
  { timeout: 300_000 },
  (name, cli) => {
    const model = useScriptedModel();

    it.skipIf('skipReason' in cli)(
      'reports each tool as the CLI starts it and the tokens so far; the final report is read as before',
      async () => {
        model().setScript([
          {
            match: `ACTIVITY-${name}`,
            actions: [
              { kind: 'write', path: 'hello.txt', content: 'hello\n' },
              { kind: 'shell', command: 'cat hello.txt' },
            ],
            finalText: 'Done.',
          },
        ]);
        const cwd = await mkdtemp(join(tmpdir(), `allium-activity-${name}-`));
        const seen: AgentActivity[] = [];
        const runner = createAgentRunner(
          agentConfigFor(cli, name === 'codex' ? { skipGitRepoCheck: true } : {}),
          { env: await envFor(name, model()), onActivity: (activity) => seen.push(activity) },
        );
        const result = await runner.run({
          prompt: `ACTIVITY-${name}`,
          cwd,
          phase: 'implement',
          resultFile: join(cwd, 'result.json'),
          timeoutMs: 240_000,
        });
        expect(result.outcome, result.detail).toBe('ok');
        const tools = [...new Set(seen.flatMap((a) => (a.tool === undefined ? [] : [a.tool])))];
        for (const tool of EXPECTED_TOOLS[name]!) expect(tools).toContain(tool);
        expect(seen.at(-1)?.tokens).toBeGreaterThan(0);
        // The streamed count is the sum of what each model turn reported; the report's total is the CLI's own.
        expect(result.tokens?.input).toBeGreaterThan(0);
      },
    );
  },
);

import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startScriptedModel, type ScriptedModelServer } from '@allium-loop/scripted-model';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_GOAL, prepareDemo } from '../commands/demo.js';
import { readJournal, readLedger, runCli, type LooseJson } from '../e2e/e2e.test-helpers.js';
import {
  REAL_CLIS,
  agentConfigFor,
  announceSkips,
  configureProject,
  demoScript,
  envFor,
  onlySlug,
} from './real-agents.test-helpers.js';


/** Codex prints no cost: the engine prices its tokens, here at a rate set for the test. */
const CODEX_PRICE = { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 };

announceSkips();

describe.each(REAL_CLIS.map((cli) => [cli.name, cli] as const))(
  'the real %s drives examples/demo to convergence against the scripted model',
  { timeout: 900_000 },
  (name, cli) => {
    let server: ScriptedModelServer;
    beforeAll(async () => {
      server = await startScriptedModel({ script: demoScript() });
    });
    afterAll(async () => {
      await server?.close();
    });

    it.skipIf('skipReason' in cli)(
      `converges with ${name} as the agent of every phase; tokens and cost in the ledger are the ones reported`,
      async () => {
        const dir = await prepareDemo();
        const extra = name === 'codex' ? { prices: { [String(agentConfigFor(cli)['model'])]: CODEX_PRICE } } : {};
        await configureProject(dir, agentConfigFor(cli, extra), { agentTimeoutSeconds: 600 });
        const run = await runCli(['run', DEMO_GOAL], dir, await envFor(name, server));
        const slug = await onlySlug(dir);
        const ledger = await readLedger(dir, slug);
        expect(ledger['terminal']?.state, `${run.stdout}\n${run.stderr}`).toBe('converged');
        expect(run.code).toBe(0);
        // The same story as with `replay`: red-check, an inner-loop round, a weed fix, two slices, integration.
        expect(run.stdout).toContain('red-check: 3 new test(s) fail first');
        expect(run.stdout).toMatch(/\[cycle:entity-lifecycle:Book\] tick 1 · tests 5\/5 · weed dirty\(1\)/);
        expect(run.stdout).toContain('[integration]');

        // Every scripted call was played, by the real CLI's own tool calls, and nothing else asked the model.
        expect(server.unusedCalls().map((c) => c.name)).toEqual([]);
        const played = server.requests.filter((r) => r.callIndex !== undefined);
        expect(server.requests.filter((r) => r.unmatched === true)).toEqual([]);
        expect(played.every((r) => r.status === 200 && r.error === undefined)).toBe(true);
        const tools = new Set(played.map((r) => r.reply));
        const expectedTools = name === 'claude' ? ['Write', 'Edit', 'Read', 'Bash'] : ['apply_patch', 'exec_command'];
        for (const tool of expectedTools) expect(tools).toContain(tool);

        // Tokens: the ledger's totals are exactly what the server reported over all calls.
        const calls = [...new Set(played.map((r) => r.callIndex!))];
        const reported = calls
          .map((i) => server.usageOfCall(i))
          .reduce((a, b) => ({
            input: a.input + b.input,
            output: a.output + b.output,
            cacheRead: a.cacheRead + b.cacheRead,
            cacheWrite: a.cacheWrite + b.cacheWrite,
          }));
        expect(ledger['spent'].tokens).toEqual(reported);
        expect(ledger['spent'].agentCalls).toBe(calls.length);

        // Cost: claude's own figure (the sum of what it printed), codex's tokens priced by the engine.
        const printed = name === 'claude' ? await printedCosts(name, dir, slug) : [];
        const expectedUsd =
          name === 'claude'
            ? printed.reduce((a, b) => a + b, 0)
            : (reported.input * CODEX_PRICE.inputPerMTok +
                reported.output * CODEX_PRICE.outputPerMTok +
                reported.cacheRead * CODEX_PRICE.cacheReadPerMTok) /
              1_000_000;
        expect(expectedUsd).toBeGreaterThan(0);
        // One result line per call.
        if (name === 'claude') expect(printed.length).toBe(calls.length);
        expect(Math.round(ledger['spent'].usd * 100)).toBe(Math.round(expectedUsd * 100));
        expect(ledger['spent'].usd).toBeCloseTo(expectedUsd, 9);

        // The journal saw each call end ok.
        const journal = await readJournal(dir, slug);
        const ends = journal.filter((e: LooseJson) => e['type'] === 'agent_call_ended' || e['type'] === 'intent_ended');
        expect(ends.length).toBeGreaterThan(0);
      },
    );
  },
);

/**
 * What the CLI printed as cost in the run's transcripts (all slices): `total_cost_usd` of each claude result line,
 * `part.cost` of each opencode `step_finish` event.
 */
export async function printedCosts(name: string, dir: string, slug: string): Promise<number[]> {
  const costs: number[] = [];
  const files = await readdir(join(dir, '.allium-loop', slug), { recursive: true });
  const [marker, field] =
    name === 'claude' ? ['"type":"result"', /"total_cost_usd":([0-9.e-]+)/] : ['"type":"step_finish"', /"cost":([0-9.e-]+)/];
  for (const file of files.filter((f) => /(^|\/)transcripts\/[^/]+\.log$/.test(f))) {
    const text = await readFile(join(dir, '.allium-loop', slug, file), 'utf8');
    for (const line of text.split('\n'))
      if (line.includes(marker)) {
        const cost = field.exec(line)?.[1];
        if (cost !== undefined) costs.push(Number(cost));
      }
  }
  return costs;
}

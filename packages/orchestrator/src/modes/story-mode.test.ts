import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FakeAgentRunner, type FakeAgentScript } from '@allium-loop/agents/testing';
import { describe, expect, it } from 'vitest';
import { makeGitRepo } from './git-checkpoint.test-helpers.js';
import { loopRecord } from './mode-session.js';
import { startModeRun } from './run-mode.js';

const PRD = {
  userStories: [
    { id: 'US-1', title: 'Export', priority: 1, passes: false, acceptanceCriteria: ['a CSV file'] },
  ],
};

describe('stories mode: stall detection fed by the driver', () => {
  it("feeds the generator's tree and both calls' tokens: an unchanged tree with climbing tokens stops token_climb", async () => {
    const cwd = await makeGitRepo({ 'README.md': 'x\n' });
    await writeFile(join(cwd, 'prd.json'), JSON.stringify(PRD));
    // The generator writes the same file each time; the evaluator edits one (reverted, its verdict void: WARN).
    const script: FakeAgentScript = (request, call) =>
      request.phase === 'evaluate'
        ? {
            result: { verdict: 'PASS' },
            files: { 'src/x.ts': `${String(call)}\n` },
            outcome: { tokens: { input: 10 } },
          }
        : { files: { 'work.txt': 'same\n' }, outcome: { tokens: { input: 1000 * call } } };
    const outcome = await startModeRun(
      'export',
      {
        mode: 'stories',
        config: { prdPath: join(cwd, 'prd.json'), skipEval: false, evalRetries: 5 },
        defaultCaps: {},
      },
      {
        cwd,
        agent: { kind: 'command', argv: ['unused'] },
        caps: { maxTicks: 10, noProgressTicks: 8 },
        env: { PATH: process.env['PATH'] },
        signal: new AbortController().signal,
        clock: { now: () => Date.now() },
        sleep: async () => undefined,
        createAgent: () => new FakeAgentRunner([script]),
      },
    );
    expect(outcome.ledger.terminal).toMatchObject({ state: 'no_progress', reason: 'token_climb' });
    const iterations = loopRecord(outcome.ledger, 'stories').stories?.iterations ?? [];
    expect(iterations.map((i) => i.verdict)).toEqual(['WARN', 'WARN', 'WARN']);
    expect(iterations.map((i) => i.tokens)).toEqual([1010, 3010, 5010]);
    // The PRD and progress.md the engine writes each iteration do not move the tree.
    expect(new Set(iterations.map((i) => i.state)).size).toBe(1);
    expect(iterations[0]?.state).toMatch(/^stories US-1:0 tree [0-9a-f]{40}$/);
  });
});

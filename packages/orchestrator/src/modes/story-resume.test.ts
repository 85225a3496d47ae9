import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FakeAgentRunner, type FakeAgentScript } from '@allium-loop/agents/testing';
import {
  createFileLedgerStore,
  createRedactor,
  type JournalEvent,
  type LedgerStore,
} from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import { makeGitRepo } from './git-checkpoint.test-helpers.js';
import { loopRecord } from './mode-session.js';
import { resumeModeRun, startModeRun, type ModeRunSettings } from './run-mode.js';

class Killed extends Error {}

/**
 * The run's store, wrapped: once `dieAfter` returns true for an appended batch the process "dies" there, as a kill -9
 * would: that batch is in the journal, and nothing after it is appended or saved.
 */
function dyingStore(dieAfter: (events: readonly JournalEvent[]) => boolean) {
  return (store: LedgerStore): LedgerStore => {
    let dead = false;
    return {
      ...store,
      async append(lease, events, options) {
        if (dead) throw new Killed('killed');
        await store.append(lease, events, options);
        if (dieAfter(events)) dead = true;
      },
      async save(lease, ledger) {
        if (dead) throw new Killed('killed');
        return store.save(lease, ledger);
      },
    };
  };
}

const PRD = {
  userStories: [
    { id: 'US-1', title: 'Export', priority: 1, passes: false, acceptanceCriteria: ['a CSV file'] },
    { id: 'US-2', title: 'Header', priority: 2, passes: false, acceptanceCriteria: ['a header row'] },
  ],
};

describe('stories mode: killed between journaling an iteration and saving it', () => {
  it('resume records the journaled iteration instead of working the story again: each verdict journaled once', async () => {
    const cwd = await makeGitRepo({ 'README.md': 'x\n' });
    const prdPath = join(cwd, 'prd.json');
    await writeFile(prdPath, JSON.stringify(PRD));
    let calls = 0;
    const script: FakeAgentScript = (request) => {
      calls += 1;
      return request.phase === 'evaluate'
        ? { result: { verdict: 'PASS' } }
        : { files: { [`src/${String(calls)}.ts`]: 'x\n' } };
    };
    const settings: ModeRunSettings = {
      cwd,
      agent: { kind: 'command', argv: ['unused'] },
      caps: { maxTicks: 10 },
      env: { PATH: process.env['PATH'] },
      signal: new AbortController().signal,
      clock: { now: () => Date.now() },
      sleep: async () => undefined,
      createAgent: () => new FakeAgentRunner([script]),
    };
    // The first iteration's record reaches the journal, and the process dies before the ledger is saved.
    const config = { prdPath, skipEval: false, evalRetries: 3 };
    const dies = dyingStore((events) => events.some((e) => e.type === 'x-stories.verdict'));
    await expect(
      startModeRun('export', { mode: 'stories', config, defaultCaps: {} }, { ...settings, wrapStore: dies }),
    ).rejects.toThrow(Killed);
    const store = createFileLedgerStore({ dir: join(cwd, '.allium-loop'), redactor: createRedactor({}) });
    const slug = (await store.list())[0]!;
    expect(calls).toBe(2);
    expect(JSON.parse(await readFile(prdPath, 'utf8'))).toEqual(PRD);

    const outcome = await resumeModeRun(slug, settings);

    expect(outcome.ledger.terminal?.state).toBe('converged');
    const iterations = loopRecord(outcome.ledger, 'stories').stories?.iterations ?? [];
    expect(iterations.map((i) => `${i.story}:${i.verdict}:${String(i.tick)}`)).toEqual([
      'US-1:PASS:1',
      'US-2:PASS:2',
    ]);
    // US-1 was not worked again: two calls for it before the kill, two for US-2 after.
    expect(calls).toBe(4);
    const journal = (await readFile(join(cwd, '.allium-loop', `${slug}.events.ndjson`), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as JournalEvent & { data?: { story?: string } });
    expect(journal.filter((e) => e.type === 'x-stories.verdict').map((e) => e.data?.story)).toEqual([
      'US-1',
      'US-2',
    ]);
    expect(journal.filter((e) => e.type === 'verdict').map((e) => e.tick)).toEqual([1, 2]);
    expect(journal.some((e) => e.type === 'note' && e.message.includes('recorded from the journal'))).toBe(
      true,
    );
    expect(outcome.ledger.verdicts.map((v) => v.tick)).toEqual([1, 2]);
    const prd = JSON.parse(await readFile(prdPath, 'utf8')) as typeof PRD;
    expect(prd.userStories.map((s) => s.passes)).toEqual([true, true]);
    const progress = await readFile(join(cwd, 'progress.md'), 'utf8');
    expect([...progress.matchAll(/^### (US-\d)/gm)].map((m) => m[1])).toEqual(['US-1', 'US-2']);
  });
});

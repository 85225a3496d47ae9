import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FakeAgentRunner } from './testing.js';

describe('FakeAgentRunner', () => {
  it('records calls, writes files and the result, and repeats its last response', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'al-fake-'));
    const request = {
      prompt: 'p',
      cwd,
      phase: 'tend',
      resultFile: join(cwd, 'r', 'x.json'),
      timeoutMs: 1,
    } as const;
    const runner = new FakeAgentRunner([
      { result: { ok: 1 }, files: { 'a.txt': 'A' }, outcome: { costUsd: 0.25 } },
      (_req, call) => ({ outcome: { outcome: 'failed', exitCode: call } }),
    ]);
    expect(await runner.run(request)).toMatchObject({ outcome: 'ok', costUsd: 0.25 });
    expect(JSON.parse(await readFile(request.resultFile, 'utf8'))).toEqual({ ok: 1 });
    expect(await readFile(join(cwd, 'a.txt'), 'utf8')).toBe('A');
    expect(await runner.run(request)).toMatchObject({ outcome: 'failed', exitCode: 2 });
    expect(await runner.run(request)).toMatchObject({ outcome: 'failed', exitCode: 3 });
    expect(runner.calls).toHaveLength(3);
    expect(await runner.run({ ...request, signal: AbortSignal.abort() })).toMatchObject({
      outcome: 'aborted',
    });
  });
});

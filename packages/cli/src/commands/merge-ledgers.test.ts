import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLedger } from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { mergeLedgersCommand } from './merge-ledgers.js';
import { planCommand } from './plan.js';

/** A bell and a clock: two slices in one wave, then the integration pass. */
const SPEC = `-- allium: 3

entity Bell {
    status: quiet | ringing
}

entity Clock {
    hour: Integer
}

rule Ring {
    when: Ring(bell)
    ensures: bell.status = ringing
}

rule Tick {
    when: Tick(clock)
    ensures: clock.hour = 1
}
`;

async function setup(): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), 'cli-merge-ledgers-'));
  await mkdir(join(cwd, 'specs'));
  await writeFile(join(cwd, 'specs', 'bells.allium'), SPEC);
  const io = createRecordingIo(cwd);
  expect(await planCommand().run(['--goal', 'bells', '--plan-out', 'plan.json'], io)).toBe(0);
  return cwd;
}

async function merge(cwd: string, args: string[]) {
  const io = createRecordingIo(cwd);
  const code = await mergeLedgersCommand().run(args, io);
  return { code, out: io.out(), err: io.err() };
}

describe('allium-loop merge-ledgers', () => {
  it.each([
    [['a.json'], '--plan <file> is required'],
    [['--plan', 'plan.json'], 'name the slice ledgers to merge'],
    [['--plan', 'plan.json', '--out', 'a.json', 'a.json'], '--out a.json is one of the inputs'],
    [['--plan', 'plan.json', '--out', 'plan.json', 'a.json'], '--out plan.json is one of the inputs'],
    [['--plan', 'plan.json', '--frob', 'a.json'], "Unknown option '--frob'"],
  ])('exits 2 on the usage error %j', async (args, message) => {
    const { code, err } = await merge(await setup(), args);
    expect(code).toBe(2);
    expect(err).toContain(message);
  });

  it('exits 1 with a clear message on a bad ledger, a ledger of no slice run or a bad plan, and changes nothing', async () => {
    const cwd = await setup();
    await writeFile(join(cwd, 'torn.json'), '{"schemaVersion":');
    const torn = await merge(cwd, ['--plan', 'plan.json', '--out', 'merged.json', 'torn.json']);
    expect(torn.code).toBe(1);
    expect(torn.err).toContain(`${join(cwd, 'torn.json')} is not a ledger: not JSON`);
    expect(await readFile(join(cwd, 'torn.json'), 'utf8')).toBe('{"schemaVersion":');
    await expect(readFile(join(cwd, 'merged.json'), 'utf8')).rejects.toThrow(/ENOENT/);

    const plain = createLedger({ goal: 'bells', slug: 'bells', mode: 'spec', now: new Date() });
    await writeFile(join(cwd, 'plain.json'), JSON.stringify(plain));
    const notSlice = await merge(cwd, ['--plan', 'plan.json', 'plain.json']);
    expect(notSlice.code).toBe(1);
    expect(notSlice.err).toContain('plain.json is not the ledger of a slice run');
    expect(notSlice.err).toContain('run --slice <id> --plan <file>');

    await writeFile(join(cwd, 'bad-plan.json'), '{"format":"allium-loop.plan"}');
    const badPlan = await merge(cwd, ['--plan', 'bad-plan.json', 'plain.json']);
    expect(badPlan.code).toBe(1);
    expect(badPlan.err).toContain('is not a stored plan');
  });

  it('prints its help', async () => {
    const { code, out } = await merge(await setup(), ['--help']);
    expect(code).toBe(0);
    expect(out).toContain('Usage: allium-loop merge-ledgers --plan <file>');
  });
});

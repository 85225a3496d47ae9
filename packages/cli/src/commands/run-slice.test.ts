import { mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { planCommand } from './plan.js';
import { resumeCommand, runCommand } from './run.js';

const LAMP = `-- allium: 3

entity Lamp {
    status: off | on
}

rule SwitchOn {
    when: SwitchOn(lamp)
    requires: lamp.status = off
    ensures: lamp.status = on
}
`;

async function run(args: string[], command = runCommand()) {
  const cwd = await mkdtemp(join(tmpdir(), 'cli-run-slice-'));
  const io = createRecordingIo(cwd);
  const code = await command.run(args, io);
  return { code, err: io.err(), files: await readdir(cwd) };
}

describe('allium-loop run --slice', () => {
  it.each([
    [['--slice', 'entity-lifecycle:Lamp'], '--slice and --plan go together'],
    [['--plan', 'plan.json'], '--slice and --plan go together'],
    [['a goal', '--slice', 'x', '--plan', 'plan.json'], 'with --slice the goal comes from the plan file'],
    [['--slice', 'x', '--plan', 'plan.json', '--entry', 'tend'], '--entry does not apply to a slice'],
    [['--slice', ' ', '--plan', 'plan.json'], '--slice needs a value'],
    [['a goal', '--ledger-out', 'l.json'], '--ledger-out goes with --slice and --plan'],
    [['--slice', 'x', '--plan', 'plan.json', '--verify', 'true'], '--slice belongs to the spec loop'],
  ])('exits 2 on the usage error %j and writes nothing', async (args, message) => {
    const { code, err, files } = await run(args);
    expect(code).toBe(2);
    expect(err).toContain(message);
    expect(files).toEqual([]);
  });

  it('exits 1 naming a missing plan file', async () => {
    const { code, err } = await run(['--slice', 'x', '--plan', 'missing.json', '--agent', 'claude']);
    expect(code).toBe(1);
    expect(err).toMatch(/Cannot read the plan file .*missing\.json/);
  });

  it('exits 2 on a slice the plan does not have, listing its slices', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'cli-run-slice-'));
    await writeFile(join(cwd, 'lamp.allium'), LAMP);
    expect(
      await planCommand().run(['--goal', 'lamps', '--plan-out', 'plan.json'], createRecordingIo(cwd)),
    ).toBe(0);
    const io = createRecordingIo(cwd);
    expect(await runCommand().run(['--slice', 'rule:Nope', '--plan', 'plan.json'], io)).toBe(2);
    expect(io.err()).toContain("The plan has no slice 'rule:Nope'.");
    expect(io.err()).toContain('entity-lifecycle:Lamp');
    expect((await readdir(cwd)).sort()).toEqual(['lamp.allium', 'plan.json']);
  });

  it('is refused by resume', async () => {
    const { code, err } = await run(['some-run', '--slice', 'x'], resumeCommand());
    expect(code).toBe(2);
    expect(err).toContain('--slice starts a slice run');
  });
});

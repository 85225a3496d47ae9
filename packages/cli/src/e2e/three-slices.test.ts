import { describe, expect, it } from 'vitest';
import { makeProject, readLedger, runCli, writeScript, type LooseJson } from './e2e.test-helpers.js';

const HOUSE_V1 = `-- allium: 3
entity House {
    name: String
}
`;

const HOUSE_V2 = `-- allium: 3
entity House {
    name: String
}

entity Lamp {
    status: off | on
}

entity Door {
    status: shut | open
}

entity Bell {
    status: quiet | ringing
}

rule SwitchOn {
    when: SwitchRequested(lamp)
    requires: lamp.status = off
    ensures: lamp.status = on
}

rule OpenDoor {
    when: OpenRequested(door)
    requires: door.status = shut
    ensures: door.status = open
}

rule RingBell {
    when: RingRequested(bell)
    requires: bell.status = quiet
    ensures: bell.status = ringing
}
`;

const FUNCTIONS = [
  ['SwitchOn', 'switchOn', 'off', 'on'],
  ['OpenDoor', 'openDoor', 'shut', 'open'],
  ['RingBell', 'ringBell', 'quiet', 'ringing'],
] as const;

const testFile = ([
  rule,
  fn,
  from,
  to,
]: (typeof FUNCTIONS)[number]) => `import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as house from '../src/house.js';
test('${rule} moves ${from} to ${to}', () => { const x = { status: '${from}' }; house.${fn}(x); assert.equal(x.status, '${to}'); });
`;

const code = (count: number) =>
  FUNCTIONS.slice(0, count)
    .map(
      ([, fn, from, to]) =>
        `export function ${fn}(x) { if (x.status !== '${from}') throw new Error('no'); x.status = '${to}'; }\n`,
    )
    .join('');

const INTEGRATION = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as house from '../src/house.js';
test('SwitchOn, OpenDoor and RingBell together: an evening arrival', () => {
  const lamp = { status: 'off' }; const door = { status: 'shut' }; const bell = { status: 'quiet' };
  house.ringBell(bell); house.openDoor(door); house.switchOn(lamp);
  assert.deepEqual([lamp.status, door.status, bell.status], ['on', 'open', 'ringing']);
});
`;

describe('a goal that splits into three slices', () => {
  it(
    'runs three slice loops in plan order, then the integration pass, and converges',
    { timeout: 240_000 },
    async () => {
      const dir = await makeProject({
        'package.json': '{ "type": "module", "private": true }\n',
        'allium-loop.yaml': 'testCommand: node --test\n',
        'specs/house.allium': HOUSE_V1,
        'src/house.js': 'export {};\n',
      });
      const clean = {
        phase: 'weed',
        result: { phase: 'weed', clean: true, divergences: [], summary: 'clean' },
      };
      const steps: Record<string, unknown>[] = [
        {
          phase: 'tend',
          write: { 'specs/house.allium': HOUSE_V2 },
          result: {
            phase: 'tend',
            specFiles: ['specs/house.allium'],
            openQuestions: [],
            summary: 'lamp, door, bell',
          },
        },
      ];
      FUNCTIONS.forEach((entry, index) => {
        const path = `test/${entry[1]}.test.js`;
        steps.push(
          {
            phase: 'propagate',
            write: { [path]: testFile(entry) },
            result: { phase: 'propagate', testFiles: [{ path, covers: [entry[0]] }], summary: entry[0] },
          },
          {
            phase: 'implement',
            write: { 'src/house.js': code(index + 1) },
            result: {
              phase: 'implement',
              filesChanged: ['src/house.js'],
              contestedTests: [],
              summary: entry[1],
            },
          },
          clean,
        );
      });
      steps.push(
        {
          phase: 'propagate',
          write: { 'test/integration.test.js': INTEGRATION },
          result: {
            phase: 'propagate',
            testFiles: [{ path: 'test/integration.test.js', covers: ['SwitchOn', 'OpenDoor', 'RingBell'] }],
            summary: 'together',
          },
        },
        clean,
      );
      const script = await writeScript(dir, steps);
      const run = await runCli(
        ['run', 'add lamps, doors and bells to the house', '--agent', 'replay', '--agent-script', script],
        dir,
      );
      expect(run.stdout).toContain('→ Slices');
      expect(run.code).toBe(0);
      const ledger = await readLedger(dir, 'add-lamps-doors-and-bells-to-the-house');
      const goals = (ledger['subGoals'] as LooseJson[]).map((g) => [g['id'], g['status']]);
      expect(goals).toHaveLength(4);
      expect(goals.at(-1)).toEqual(['integration', 'converged']);
      expect(goals.every(([, status]) => status === 'converged')).toBe(true);
      expect(ledger['terminal'].state).toBe('converged');
      for (const [id] of goals.slice(0, 3)) expect(run.stdout).toContain(`[${String(id)}] tick 1`);
    },
  );
});

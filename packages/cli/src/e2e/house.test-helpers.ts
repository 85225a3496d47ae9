import { propagateStep } from './e2e.test-helpers.js';

/** A house spec before the goal: one entity. */
export const HOUSE_V1 = `-- allium: 3
entity House {
    name: String
}
`;

/** The house spec after tend: lamps, doors and bells, three independent slices. */
export const HOUSE_V2 = `-- allium: 3
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

/**
 * Rule, function, from and to state and entity of each slice, in the plan's slice order (Bell, Door, Lamp); each
 * slice's test names its rule and its entity, so the witness finds every obligation of the slice covered.
 */
export const FUNCTIONS = [
  ['RingBell', 'ringBell', 'quiet', 'ringing', 'Bell'],
  ['OpenDoor', 'openDoor', 'shut', 'open', 'Door'],
  ['SwitchOn', 'switchOn', 'off', 'on', 'Lamp'],
] as const;

/** The propagated test of one slice. */
export const testFile = ([
  rule,
  fn,
  from,
  to,
  entity,
]: (typeof FUNCTIONS)[number]) => `import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as house from '../src/house.js';
test('${rule} moves ${entity}.status from ${from} to ${to}', () => { const x = { status: '${from}' }; house.${fn}(x); assert.equal(x.status, '${to}'); });
`;

/** The house code with the first `count` slices implemented. */
export const code = (count: number) =>
  FUNCTIONS.slice(0, count)
    .map(
      ([, fn, from, to]) =>
        `export function ${fn}(x) { if (x.status !== '${from}') throw new Error('no'); x.status = '${to}'; }\n`,
    )
    .join('');

/** The integration pass's cross-slice test. */
export const INTEGRATION = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as house from '../src/house.js';
test('SwitchOn, OpenDoor and RingBell together: an evening arrival', () => {
  const lamp = { status: 'off' }; const door = { status: 'shut' }; const bell = { status: 'quiet' };
  house.ringBell(bell); house.openDoor(door); house.switchOn(lamp);
  assert.deepEqual([lamp.status, door.status, bell.status], ['on', 'open', 'ringing']);
});
`;

/** The house project before the goal. */
export const HOUSE_PROJECT: Record<string, string> = {
  'package.json': '{ "type": "module", "private": true }\n',
  'allium-loop.yaml': 'testCommand: node --test\n',
  'specs/house.allium': HOUSE_V1,
  'src/house.js': 'export {};\n',
};

const CLEAN_WEED = {
  phase: 'weed',
  result: { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' },
};

function implementStep(count: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    phase: 'implement',
    write: { 'src/house.js': code(count) },
    result: { phase: 'implement', files_changed: ['src/house.js'], contested_tests: [], summary: `${count}` },
    ...extra,
  };
}

/**
 * The replay script of the house goal: tend writes {@link HOUSE_V2}; each slice propagates its test, implements and
 * weeds clean; the integration pass propagates {@link INTEGRATION} and weeds clean. `tendDelayMs` slows tend;
 * `hangInSlice` (0-based) puts an implement call that hangs for ten minutes before that slice's real one.
 */
export function houseSteps(
  options: { readonly tendDelayMs?: number; readonly hangInSlice?: number } = {},
): Record<string, unknown>[] {
  const steps: Record<string, unknown>[] = [
    {
      phase: 'tend',
      ...(options.tendDelayMs === undefined ? {} : { delayMs: options.tendDelayMs }),
      write: { 'specs/house.allium': HOUSE_V2 },
      result: { phase: 'tend', spec_path: 'specs/house.allium', open_questions: [], summary: 'house' },
    },
  ];
  FUNCTIONS.forEach((entry, index) => {
    const path = `test/${entry[1]}.test.js`;
    steps.push(propagateStep({ [path]: testFile(entry) }, { [path]: [entry[0], entry[4]] }, entry[0]));
    if (index === options.hangInSlice)
      steps.push(implementStep(index, { delayMs: 600_000, description: 'hangs until Ctrl-C' }));
    steps.push(implementStep(index + 1), CLEAN_WEED);
  });
  steps.push(
    propagateStep(
      { 'test/integration.test.js': INTEGRATION },
      { 'test/integration.test.js': ['SwitchOn', 'OpenDoor', 'RingBell'] },
      'together',
    ),
    CLEAN_WEED,
  );
  return steps;
}

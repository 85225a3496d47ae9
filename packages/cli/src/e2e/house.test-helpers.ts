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

/** Rule, function, from and to state of each slice. */
export const FUNCTIONS = [
  ['SwitchOn', 'switchOn', 'off', 'on'],
  ['OpenDoor', 'openDoor', 'shut', 'open'],
  ['RingBell', 'ringBell', 'quiet', 'ringing'],
] as const;

/** The propagated test of one slice. */
export const testFile = ([
  rule,
  fn,
  from,
  to,
]: (typeof FUNCTIONS)[number]) => `import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as house from '../src/house.js';
test('${rule} moves ${from} to ${to}', () => { const x = { status: '${from}' }; house.${fn}(x); assert.equal(x.status, '${to}'); });
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

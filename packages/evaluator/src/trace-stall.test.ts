import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { flatTicks, madeProgress, stallWarning, type TraceEntry } from './trace-stall.js';

const schema = JSON.parse(
  readFileSync(new URL('../../../docs/schemas/upstream/trace-entry.schema.json', import.meta.url), 'utf8'),
) as object;
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

function entry(tick: number, passed: number, failed: number, extra: Partial<TraceEntry> = {}): TraceEntry {
  const value: TraceEntry = {
    tick,
    phases: [{ name: 'implement', reason: `${String(failed)} failing test(s)` }],
    tests: { passed, failed },
    weed: 'dirty',
    uncovered_obligations: 0,
    open_questions: { blocking: 0, parked: 1 },
    ...extra,
  };
  if (!validate(value)) throw new Error(JSON.stringify(validate.errors));
  return value;
}

describe('madeProgress (upstream §13: any convergence metric improved)', () => {
  const base = entry(1, 5, 5, { uncovered_obligations: 3, open_questions: { blocking: 2, parked: 0 } });
  it.each([
    ['fewer failing tests', { tests: { passed: 6, failed: 4 } }, true],
    ['weed dirty → clean', { weed: 'clean' as const }, true],
    ['fewer uncovered obligations', { uncovered_obligations: 2 }, true],
    ['fewer blocking questions', { open_questions: { blocking: 1, parked: 0 } }, true],
    ['more passing tests but as many failing (a new test)', { tests: { passed: 9, failed: 5 } }, false],
    ['fewer parked questions only', { open_questions: { blocking: 2, parked: 0 } }, false],
    ['nothing moved', {}, false],
    ['worse', { tests: { passed: 4, failed: 6 } }, false],
  ])('%s → %s', (_name, change, expected) => {
    expect(madeProgress(base, { ...base, tick: 2, ...change })).toBe(expected);
  });
});

describe('stallWarning', () => {
  it('is silent while every tick makes progress, and on the first tick', () => {
    expect(stallWarning([entry(1, 5, 5)])).toBeUndefined();
    expect(stallWarning([entry(1, 5, 5), entry(2, 7, 3), entry(3, 9, 1)])).toBeUndefined();
  });

  it('warns at the first flat tick by default, naming what is stuck and for how long', () => {
    const trace = [
      entry(1, 2, 8),
      entry(2, 4, 6),
      entry(3, 5, 5),
      entry(4, 5, 5, { uncovered_obligations: 3 }),
    ];
    expect(flatTicks(trace)).toBe(1);
    expect(stallWarning(trace)).toBe(
      '⚠ tick 4 · no progress — tests stuck at 5/10 for 2 ticks, weed still dirty, 3 uncovered',
    );
  });

  it('keeps warning at each further flat tick, and waits for the threshold when it is raised', () => {
    const trace = [entry(1, 5, 5), entry(2, 5, 5), entry(3, 5, 5)];
    expect(stallWarning(trace.slice(0, 2), 2)).toBeUndefined();
    expect(stallWarning(trace, 2)).toBe(
      '⚠ tick 3 · no progress — tests stuck at 5/10 for 3 ticks, weed still dirty',
    );
    expect(stallWarning(trace, 1)).toContain('for 3 ticks');
  });

  it('names open blocking questions, and says nothing once the tick reads as converged', () => {
    const blocked = { open_questions: { blocking: 1, parked: 0 }, weed: 'clean' as const };
    expect(stallWarning([entry(1, 3, 0, blocked), entry(2, 3, 0, blocked)])).toBe(
      '⚠ tick 2 · no progress — tests stuck at 3/3 for 2 ticks, 1 blocking question(s) open',
    );
    const done = { weed: 'clean' as const };
    expect(stallWarning([entry(1, 3, 0, done), entry(2, 3, 0, done)])).toBeUndefined();
  });
});

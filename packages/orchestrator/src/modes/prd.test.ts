import { describe, expect, it } from 'vitest';
import {
  applyVerdict,
  changedCriteria,
  criteriaChecksums,
  nextStory,
  parsePrd,
  readVerdict,
  serializePrd,
  tamperedStatus,
  type Prd,
} from './prd.js';

const prd = (stories: object[], extra: object = {}) =>
  JSON.stringify({ project: 'x', ...extra, userStories: stories });
const story = (id: string, priority: number, more: object = {}) => ({
  id,
  title: `story ${id}`,
  priority,
  passes: false,
  ...more,
});

function parsed(text: string): Prd {
  const result = parsePrd(text);
  if (!result.ok) throw new Error(result.issues.join('\n'));
  return result.value;
}

describe('parsePrd', () => {
  it('keeps keys other tools write', () => {
    const value = parsed(prd([story('US-1', 1, { dependsOn: ['US-0'] })], { branchName: 'ralph/x' }));
    expect(value['branchName']).toBe('ralph/x');
    expect(JSON.parse(serializePrd(value)).userStories[0].dependsOn).toEqual(['US-0']);
  });

  it.each(['stories', 'tasks'])('names a wrong top-level key "%s" instead of fixing it', (key) => {
    const result = parsePrd(JSON.stringify({ [key]: [story('a', 1)] }));
    expect(result).toEqual({ ok: false, issues: [expect.stringContaining(`found "${key}"`)] });
  });

  it('lists schema issues with their path, and duplicate ids', () => {
    const bad = parsePrd(prd([{ id: 'a', title: 't', priority: 'high', passes: false }]));
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.issues[0]).toMatch(/^userStories\.0\.priority:/);
    const dup = parsePrd(prd([story('a', 1), story('a', 2)]));
    expect(!dup.ok && dup.issues[0]).toBe('duplicate story ids: a');
    expect(parsePrd('{').ok).toBe(false);
    expect(parsePrd('[]').ok).toBe(false);
  });
});

describe('nextStory', () => {
  it('works the lowest priority number first, skipping passed and blocked stories', () => {
    const value = parsed(
      prd([story('c', 3), story('a', 1, { passes: true }), story('b', 2, { blocked: true }), story('d', 3)]),
    );
    expect(nextStory(value)?.id).toBe('c');
    expect(nextStory(value, 'd')?.id).toBe('d');
    expect(nextStory(value, 'a')).toBeUndefined();
  });
});

describe('applyVerdict', () => {
  it('passes a story, or records the rejection and blocks it at the retry limit', () => {
    let value = parsed(prd([story('a', 1, { notes: 'earlier' })]));
    value = applyVerdict(value, 'a', { verdict: 'REJECT', reason: 'no test for empty input' }, 2);
    expect(value.userStories[0]).toMatchObject({
      rejections: 1,
      notes: 'earlier\n[REJECTED] no test for empty input',
    });
    expect(value.userStories[0]?.blocked).toBeUndefined();
    value = applyVerdict(value, 'a', { verdict: 'REJECT', reason: 'still missing' }, 2);
    expect(value.userStories[0]).toMatchObject({
      rejections: 2,
      blocked: true,
      notes:
        'earlier\n[REJECTED] no test for empty input\n[REJECTED] still missing\n[BLOCKED] rejected 2 times; needs a human',
    });
    expect(applyVerdict(value, 'a', { verdict: 'PASS' }, 2).userStories[0]?.passes).toBe(true);
  });
});

describe('checksums and tampering', () => {
  it('detects edited criteria and engine-owned fields changed on disk', () => {
    const engine = parsed(prd([story('a', 1, { acceptanceCriteria: ['x works'] }), story('b', 2)]));
    const sums = criteriaChecksums(engine);
    const disk = parsed(
      prd([story('a', 1, { acceptanceCriteria: ['x mostly works'] }), story('b', 2, { passes: true })]),
    );
    expect(changedCriteria(disk, sums)).toEqual(['a']);
    expect(changedCriteria(engine, sums)).toEqual([]);
    expect(tamperedStatus(engine, disk)).toEqual(['b']);
  });
});

describe('readVerdict', () => {
  it.each([
    [undefined, 'REJECT'],
    ['not json', 'REJECT'],
    ['{"verdict":"pass"}', 'REJECT'],
    ['{"verdict":"REJECT"}', 'REJECT'],
    ['{"verdict":"PASS"}', 'PASS'],
  ])('%s → %s', (text, verdict) => {
    expect(readVerdict(text).verdict).toBe(verdict);
  });

  it('keeps the reason of a REJECT', () => {
    expect(readVerdict('{"verdict":"REJECT","reason":"criterion 2 fails"}')).toEqual({
      verdict: 'REJECT',
      reason: 'criterion 2 fails',
    });
  });
});

import { describe, expect, it } from 'vitest';
import { detectEntry, type ProjectState } from './index.js';

const state = (spec: boolean, code: boolean): ProjectState => ({
  specFiles: spec ? ['billing.allium'] : [],
  hasCode: code,
  hasTestCommand: code,
});

/** One goal per intent, so the rows below read as the architecture's entry table. */
const GOAL = {
  capture: 'document how invoices work today',
  add: 'add gift cards to checkout',
  change: 'change the refund window to 30 days',
  reconcile: 'make the code match the spec again',
  ambiguous: 'billing',
} as const;

describe('detectEntry: the entry table', () => {
  it.each([
    // No spec, no code: there is nothing to read, so every goal starts by eliciting the spec.
    [false, false, 'capture', 'elicit', 'spec-first'],
    [false, false, 'add', 'elicit', 'spec-first'],
    [false, false, 'ambiguous', 'elicit', 'spec-first'],
    // No spec, code present: capture distills, new or changed behaviour is elicited.
    [false, true, 'capture', 'distill', 'code-first'],
    [false, true, 'add', 'elicit', 'spec-first'],
    [false, true, 'change', 'elicit', 'spec-first'],
    [false, true, 'reconcile', 'distill', 'code-first'],
    [false, true, 'ambiguous', 'distill', 'code-first'],
    // Spec present: changes go through tend, drift through weed, capture through distill when there is code.
    [true, true, 'add', 'tend', 'spec-first'],
    [true, true, 'change', 'tend', 'spec-first'],
    [true, true, 'reconcile', 'weed', 'spec-first'],
    [true, true, 'capture', 'distill', 'code-first'],
    [true, true, 'ambiguous', 'weed', 'spec-first'],
    [true, false, 'capture', 'elicit', 'spec-first'],
    [true, false, 'add', 'tend', 'spec-first'],
    [true, false, 'reconcile', 'weed', 'spec-first'],
  ] as const)('spec %s, code %s, %s goal → %s (%s)', (spec, code, intent, entry, mode) => {
    const decision = detectEntry(state(spec, code), GOAL[intent]);
    expect(decision).toMatchObject({ entry, mode, intent, overridden: false });
  });
});

describe('detectEntry: the announcement', () => {
  it('is one line naming the path, the reason, the cues and the --entry override', () => {
    const { announcement } = detectEntry(state(true, true), 'add gift cards to checkout');
    expect(announcement).toBe(
      'Starting with tend (spec-first): spec present and the goal adds behaviour (cues: "add"). ' +
        'Override with --entry elicit|distill|weed.',
    );
    expect(announcement).not.toContain('\n');
  });

  it('says when an ambiguous goal got the safe default', () => {
    const { announcement, reason } = detectEntry(state(true, true), 'billing');
    expect(reason).toContain('safe default');
    expect(announcement).toContain('The goal is ambiguous; this is the safe default.');
    expect(announcement).toContain('--entry');
  });

  it('honours --entry, keeps the classified intent, and cautions when the project lacks what the path needs', () => {
    const forced = detectEntry(state(false, false), 'add gift cards', 'distill');
    expect(forced).toMatchObject({ entry: 'distill', mode: 'code-first', intent: 'add', overridden: true });
    expect(forced.announcement).toBe(
      'Starting with distill (code-first): chosen with --entry distill (no code was found to distill from).',
    );
    expect(detectEntry(state(false, true), 'billing', 'weed').reason).toBe(
      'chosen with --entry weed (no spec was found)',
    );
    expect(detectEntry(state(true, true), 'billing', 'tend').reason).toBe('chosen with --entry tend');
  });
});

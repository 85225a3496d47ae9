import { describe, expect, it } from 'vitest';
import { classifyGoal, detectEntry, normaliseGoal, type EntryPoint, type GoalIntent } from './index.js';

const SPEC_AND_CODE = { specFiles: ['spec/shop.allium'], hasCode: true, hasTestCommand: true };
const CODE_ONLY = { specFiles: [], hasCode: true, hasTestCommand: true };

type Row = readonly [
  goal: string,
  intent: GoalIntent | 'ambiguous',
  withSpec: EntryPoint,
  codeOnly: EntryPoint,
];

/**
 * Real-sounding goals with the intent the classifier must read and the entry expected in the two common project
 * states: a spec and code (`withSpec`), and code without a spec (`codeOnly`).
 */
const GOALS: readonly Row[] = [
  // Adding behaviour: tend the spec when there is one, elicit it otherwise.
  ['add gift cards to checkout', 'add', 'tend', 'elicit'],
  ['support partial refunds', 'add', 'tend', 'elicit'],
  ['allow customers to pause their subscription', 'add', 'tend', 'elicit'],
  ['implement password reset by email', 'add', 'tend', 'elicit'],
  ['introduce a loyalty points programme', 'add', 'tend', 'elicit'],
  ['let admins export invoices as CSV', 'add', 'tend', 'elicit'],
  ['enable two-factor authentication for staff accounts', 'add', 'tend', 'elicit'],
  ['support Apple Pay at checkout', 'add', 'tend', 'elicit'],
  ['customers should be able to split a payment across two cards', 'add', 'tend', 'elicit'],
  ['add a cancellation reason field to orders', 'add', 'tend', 'elicit'],
  ['write a spec for the new referral programme', 'add', 'tend', 'elicit'],
  ['spec the new waitlist feature', 'add', 'tend', 'elicit'],
  // Changing behaviour.
  ['change the refund window from 14 to 30 days', 'change', 'tend', 'elicit'],
  ['rename Customer to Account everywhere', 'change', 'tend', 'elicit'],
  ['remove the legacy coupon codes', 'change', 'tend', 'elicit'],
  ['make refunds require manager approval', 'change', 'tend', 'elicit'],
  ['orders should no longer auto-cancel after 48 hours', 'change', 'tend', 'elicit'],
  ['replace email notifications with SMS', 'change', 'tend', 'elicit'],
  ['increase the maximum loan period to 21 days', 'change', 'tend', 'elicit'],
  ['update the late fee rules to cap fees at $20', 'change', 'tend', 'elicit'],
  ['stop sending reminder emails on weekends', 'change', 'tend', 'elicit'],
  ['block checkout for accounts with unpaid invoices', 'change', 'tend', 'elicit'],
  ['deprecate the v1 export endpoint', 'change', 'tend', 'elicit'],
  ['add a spending limit to team cards', 'change', 'tend', 'elicit'],
  // Capturing behaviour that exists: distill from the code.
  ['document how refunds work today', 'capture', 'distill', 'distill'],
  ['spec out the billing module', 'capture', 'distill', 'distill'],
  ['capture the billing module', 'capture', 'distill', 'distill'],
  ['describe the current order lifecycle', 'capture', 'distill', 'distill'],
  ['write a spec for the existing shipping rules', 'capture', 'distill', 'distill'],
  ['reverse engineer the invoicing workflow into a spec', 'capture', 'distill', 'distill'],
  ['map out how subscriptions renew today', 'capture', 'distill', 'distill'],
  ['What does the cancellation flow actually do?', 'capture', 'distill', 'distill'],
  ['How are late fees calculated?', 'capture', 'distill', 'distill'],
  ['explain how the scheduler decides retries', 'capture', 'distill', 'distill'],
  ['add a spec for the notifications module', 'capture', 'distill', 'distill'],
  // Reconciling drift: weed against the spec; without a spec there is nothing to weed, so capture first.
  ['make the code match the spec again', 'reconcile', 'weed', 'distill'],
  ['check the code still matches the spec', 'reconcile', 'weed', 'distill'],
  ['find where the implementation has drifted from the spec', 'reconcile', 'weed', 'distill'],
  ['reconcile the shipping service with its specification', 'reconcile', 'weed', 'distill'],
  ['audit the checkout code against the spec', 'reconcile', 'weed', 'distill'],
  ['the code is out of sync with the spec, bring it back in line', 'reconcile', 'weed', 'distill'],
  ['verify the returns flow behaves as specified', 'reconcile', 'weed', 'distill'],
  ['fix the bug where cancelled orders still ship', 'reconcile', 'weed', 'distill'],
  ['make sure the implementation follows the spec', 'reconcile', 'weed', 'distill'],
  ['refactor the invoice generator without changing behaviour', 'reconcile', 'weed', 'distill'],
  ['tests are failing after the last merge', 'reconcile', 'weed', 'distill'],
  // Ambiguous: the safe default, said out loud.
  ['look at the payments module', 'ambiguous', 'weed', 'distill'],
  ['billing', 'ambiguous', 'weed', 'distill'],
  ['clean up the order service', 'ambiguous', 'weed', 'distill'],
  ['', 'ambiguous', 'weed', 'distill'],
];

describe('classifyGoal and detectEntry on real-sounding goals', () => {
  it('has at least 40 goals in the table', () => {
    expect(GOALS.length).toBeGreaterThanOrEqual(40);
  });

  it.each(GOALS)(
    '"%s" reads as %s → %s with a spec, %s with code only',
    (goal, intent, withSpec, codeOnly) => {
      expect(classifyGoal(goal).intent).toBe(intent);
      expect(detectEntry(SPEC_AND_CODE, goal).entry).toBe(withSpec);
      expect(detectEntry(CODE_ONLY, goal).entry).toBe(codeOnly);
    },
  );
});

describe('classifyGoal', () => {
  it('reports the cues that matched and the score per intent', () => {
    const result = classifyGoal('Document how refunds work today');
    expect(result.cues).toEqual(['how refunds work today', 'document', 'today']);
    expect(result.scores).toEqual({ capture: 7, add: 0, change: 0, reconcile: 0 });
  });

  it('calls a tie between intents that start differently ambiguous', () => {
    // "add" (add, 2) against "describe" (capture, 2).
    expect(classifyGoal('add and describe the payments').intent).toBe('ambiguous');
  });

  it('matches whole words only, so "renew" is not "new" and "changing" alone is no cue', () => {
    expect(classifyGoal('renew').intent).toBe('ambiguous');
    expect(classifyGoal('changing').intent).toBe('ambiguous');
  });

  it('normalises case, punctuation and curly apostrophes', () => {
    expect(normaliseGoal('  Make   the CODE match the spec — again!  ')).toBe(
      'make the code match the spec again',
    );
    expect(normaliseGoal('doesn\u2019t match')).toBe('doesnt match');
  });
});

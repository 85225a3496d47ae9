import type { GoalIntent } from './entry-types.js';

/** One rule of the goal classifier: a word or phrase pattern that votes for an intent with a weight. */
export interface GoalCue {
  readonly intent: GoalIntent;
  /** Matched against the normalised goal (lower case, punctuation turned into spaces, single spaces). */
  readonly pattern: RegExp;
  /** Strong phrases weigh 3, ordinary verbs 2, weak hints 1. */
  readonly weight: 1 | 2 | 3;
}

const cue = (intent: GoalIntent, weight: 1 | 2 | 3, source: string): GoalCue => ({
  intent,
  weight,
  pattern: new RegExp(`\\b(?:${source})\\b`),
});

const SPEC = 'spec|specs|specification|allium spec';

/**
 * The classifier's rules, in the order their cues are reported. Edit this table (and the goal table in
 * `classify-goal.test.ts`, and docs/entry.md) together.
 */
export const GOAL_CUES: readonly GoalCue[] = [
  // Reconcile: the spec stands, the code may have drifted from it.
  cue(
    'reconcile',
    3,
    `(?:match|matches|follow|follows|conform to|conforms to|agree with|agrees with|consistent with|in line with|against) (?:the |its |our )?(?:${SPEC})`,
  ),
  cue(
    'reconcile',
    3,
    'drift|drifted|drifting|out of sync|in sync|reconcile|diverge|diverged|divergence|divergences',
  ),
  cue('reconcile', 3, 'as specified|as specced|without changing|back in line|weed'),
  cue(
    'reconcile',
    2,
    'verify|audit|check whether|check that|still holds|still hold|regression|failing|broken|bug|fix|mismatch',
  ),
  cue('reconcile', 1, 'again|still'),
  // Capture: describe what the code does today.
  cue(
    'capture',
    3,
    'how (?:\\w+ ){0,4}(?:works?|behaves?|happens?) today|existing behaviou?r|current behaviou?r|as it is|as is',
  ),
  cue('capture', 3, 'reverse engineer|distill|what does|add a spec|add specs|capture'),
  cue(
    'capture',
    2,
    'document|describe|spec out|write a spec|write the spec|write specs|map out|explain|understand',
  ),
  cue('capture', 2, 'today|currently|existing|^how|^what'),
  // Add: new behaviour.
  cue('add', 3, 'new|should be able to|be able to|let (?:users|customers|admins|staff|people|members)'),
  cue(
    'add',
    2,
    'add|adds|adding|support|implement|introduce|allow|enable|build|create|offer|integrate|accept',
  ),
  // Change: existing behaviour made different.
  cue('change', 3, 'no longer|instead of|rather than'),
  cue(
    'change',
    2,
    'change|changes|modify|update|rename|remove|drop|replace|switch|stop|increase|decrease|raise|lower',
  ),
  cue(
    'change',
    2,
    'extend|shorten|restrict|limit|require|requires|deprecate|rework|tighten|loosen|cap|block|prevent|forbid|disallow',
  ),
];

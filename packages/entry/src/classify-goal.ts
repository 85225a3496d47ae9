import type { GoalClassification, GoalIntent } from './entry-types.js';
import { GOAL_CUES } from './goal-cues.js';

/** Lower-cases a goal, turns punctuation into spaces and collapses runs of spaces, so cues match on words. */
export function normaliseGoal(goal: string): string {
  return goal
    .toLowerCase()
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[^a-z0-9'$]+/g, ' ')
    .replace(/'/g, '')
    .trim()
    .replace(/\s+/g, ' ');
}

/**
 * Reads a goal's intent with the word and phrase rules of {@link GOAL_CUES}: every matching cue adds its weight to
 * its intent, and the highest score wins. No cue at all, or a tie at the top between intents that lead to
 * different entries, is `ambiguous`; a tie between `add` and `change` alone reads as `change` (both alter
 * behaviour and start the same way). Deterministic, no model call.
 */
export function classifyGoal(goal: string): GoalClassification {
  const text = normaliseGoal(goal);
  const scores: Record<GoalIntent, number> = { capture: 0, add: 0, change: 0, reconcile: 0 };
  const cues: string[] = [];
  for (const rule of GOAL_CUES) {
    const match = rule.pattern.exec(text);
    if (match === null) continue;
    scores[rule.intent] += rule.weight;
    cues.push(match[0]);
  }
  return { intent: pickIntent(scores), cues, scores };
}

function pickIntent(scores: Readonly<Record<GoalIntent, number>>): GoalIntent | 'ambiguous' {
  const ranked = (Object.entries(scores) as [GoalIntent, number][]).sort((a, b) => b[1] - a[1]);
  const [first, second] = [ranked[0]!, ranked[1]!];
  if (first[1] === 0) return 'ambiguous';
  if (first[1] > second[1]) return first[0];
  const tied = ranked.filter(([, score]) => score === first[1]).map(([intent]) => intent);
  return tied.length === 2 && tied.includes('add') && tied.includes('change') ? 'change' : 'ambiguous';
}

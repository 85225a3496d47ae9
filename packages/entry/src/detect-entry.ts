import { classifyGoal } from './classify-goal.js';
import {
  ENTRY_POINTS,
  type EntryDecision,
  type EntryMode,
  type EntryPoint,
  type GoalClassification,
  type GoalIntent,
  type ProjectState,
} from './entry-types.js';

interface Route {
  readonly entry: EntryPoint;
  readonly reason: string;
}

/** The mode an entry implies: distill recovers the spec from code; every other path lets the spec lead. */
export function modeOf(entry: EntryPoint): EntryMode {
  return entry === 'distill' ? 'code-first' : 'spec-first';
}

const INTENT_WORDS: Record<GoalIntent | 'ambiguous', string> = {
  capture: 'captures existing behaviour',
  add: 'adds behaviour',
  change: 'changes behaviour',
  reconcile: 'reconciles the code with the spec',
  ambiguous: 'is ambiguous',
};

function routeWithoutSpec(hasCode: boolean, intent: GoalIntent | 'ambiguous'): Route {
  if (!hasCode) return { entry: 'elicit', reason: 'no spec and no code yet' };
  if (intent === 'add' || intent === 'change')
    return { entry: 'elicit', reason: `no spec, code present, and the goal ${INTENT_WORDS[intent]}` };
  if (intent === 'capture')
    return { entry: 'distill', reason: 'no spec, code present, and the goal captures existing behaviour' };
  if (intent === 'reconcile')
    return { entry: 'distill', reason: 'no spec to reconcile against, so the code is captured first' };
  return {
    entry: 'distill',
    reason: 'no spec and code present; the goal is ambiguous, so the safe default captures the code first',
  };
}

function routeWithSpec(hasCode: boolean, intent: GoalIntent | 'ambiguous'): Route {
  if (intent === 'add' || intent === 'change')
    return { entry: 'tend', reason: `spec present and the goal ${INTENT_WORDS[intent]}` };
  if (intent === 'capture' && hasCode)
    return { entry: 'distill', reason: 'spec present and the goal captures what the code does today' };
  if (intent === 'capture')
    return { entry: 'elicit', reason: 'spec present but no code to read, so the behaviour is elicited' };
  if (intent === 'reconcile')
    return { entry: 'weed', reason: 'spec present and the code may have drifted from it' };
  return {
    entry: 'weed',
    reason: 'spec present; the goal is ambiguous, so the safe default checks for drift first',
  };
}

function overrideCaution(state: ProjectState, entry: EntryPoint): string {
  const hasSpec = state.specFiles.length > 0;
  if (entry === 'distill' && !state.hasCode) return ' (no code was found to distill from)';
  if ((entry === 'tend' || entry === 'weed') && !hasSpec) return ' (no spec was found)';
  return '';
}

function announce(entry: EntryPoint, reason: string, classification: GoalClassification): string {
  const cues =
    classification.cues.length === 0 ? '' : ` (cues: ${classification.cues.map((c) => `"${c}"`).join(', ')})`;
  const ambiguous =
    classification.intent === 'ambiguous' ? ' The goal is ambiguous; this is the safe default.' : '';
  const others = ENTRY_POINTS.filter((candidate) => candidate !== entry).join('|');
  return `Starting with ${entry} (${modeOf(entry)}): ${reason}${cues}.${ambiguous} Override with --entry ${others}.`;
}

/**
 * Decides where a run starts, implementing the entry table of the architecture (§3): no spec and no code →
 * elicit; no spec, code, goal captures → distill; no spec, code, goal adds or changes → elicit; spec and a goal
 * that adds or changes → tend; spec and drift to reconcile → weed. Ambiguous goals get the safe default (weed
 * with a spec, distill without one but with code) and the announcement says so. `override` (the `--entry` flag)
 * wins and is announced as such, with a caution when the project lacks what that path needs. Pure; never throws.
 */
export function detectEntry(state: ProjectState, goal: string, override?: EntryPoint): EntryDecision {
  const classification = classifyGoal(goal);
  const intent = classification.intent;
  if (override !== undefined) {
    const reason = `chosen with --entry ${override}${overrideCaution(state, override)}`;
    const announcement = `Starting with ${override} (${modeOf(override)}): ${reason}.`;
    return { entry: override, mode: modeOf(override), intent, overridden: true, reason, announcement };
  }
  const route =
    state.specFiles.length > 0
      ? routeWithSpec(state.hasCode, intent)
      : routeWithoutSpec(state.hasCode, intent);
  const announcement = announce(route.entry, route.reason, classification);
  return {
    entry: route.entry,
    mode: modeOf(route.entry),
    intent,
    overridden: false,
    reason: route.reason,
    announcement,
  };
}

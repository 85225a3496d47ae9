import type { Observation, TestTerm, WeedTerm } from './observation.js';

/**
 * The progress fingerprint of an observation: a short, deterministic string over the measures that show
 * progress — test passed/failed/skipped counts (or `unknown`), weed divergences, open questions (blocking and
 * parked), structural errors and, in code-first runs, distill's new findings. Two ticks with the same fingerprint
 * made no measurable progress. Names of failing tests are left out on purpose: reshuffling which tests fail
 * without changing how many is not progress.
 *
 * Example: `tests 14/3/0 · weed 2 · q 0/1 · errors 0 · distill -`.
 */
export function fingerprint(observation: Observation): string {
  const distill = observation.distillNew === undefined ? '-' : String(observation.distillNew);
  const { blocking, parked } = observation.openQuestions;
  return [
    `tests ${testPart(observation.tests)}`,
    `weed ${weedPart(observation.weed)}`,
    `q ${String(blocking)}/${String(parked)}`,
    `errors ${String(observation.structuralErrors)}`,
    `distill ${distill}`,
  ].join(' · ');
}

function testPart(tests: TestTerm): string {
  if (tests.counts === 'unknown') return `unknown(${tests.timedOut ? 'timeout' : String(tests.exitCode)})`;
  return `${String(tests.passed)}/${String(tests.failed)}/${String(tests.skipped)}`;
}

function weedPart(weed: WeedTerm): string {
  if (weed.status === 'clean') return '0';
  if (weed.status === 'dirty') return String(weed.divergences);
  return 'not_run';
}

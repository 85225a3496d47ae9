import type { WorkerPhase } from './worker-phase.js';

/** Where a phase's agent writes its result: `.allium-loop/<slug>/results/<tick>-<phase>.json`, relative to the root. */
export function resultFilePath(slug: string, tick: number, phase: WorkerPhase): string {
  return `.allium-loop/${slug}/results/${tick}-${phase}.json`;
}

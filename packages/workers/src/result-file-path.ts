import type { WorkerPhase } from './worker-phase.js';

/** Where a phase's agent writes its result: `.allium-loop/<slug>/results/<tick>-<phase>.json`, relative to the root. */
export function resultFilePath(slug: string, tick: number, phase: WorkerPhase): string {
  return `.allium-loop/${slug}/results/${tick}-${phase}.json`;
}

/** Where the engine-side record of a result file goes: beside it, `<tick>-<phase>.loop.json`. */
export function loopRecordPath(resultFile: string): string {
  return resultFile.replace(/\.json$/, '') + '.loop.json';
}

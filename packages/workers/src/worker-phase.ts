/** The phases a worker can run. */
export type WorkerPhase = 'elicit' | 'distill' | 'propagate' | 'tend' | 'weed' | 'implement';

/** Every phase, in the order a tick may run them. */
export const WORKER_PHASES: readonly WorkerPhase[] = [
  'elicit',
  'distill',
  'tend',
  'propagate',
  'implement',
  'weed',
];

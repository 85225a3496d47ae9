import { parseArgs } from 'node:util';

/** The shared flags of the makespan benchmarks: repetitions, the scripted agent's latency and the wave's width. */
export function makespanArgs(): {
  readonly reps: number;
  readonly latencyMs: number;
  readonly names: readonly string[];
  readonly keep: boolean;
} {
  const { values } = parseArgs({
    options: {
      reps: { type: 'string', default: '3' },
      'latency-ms': { type: 'string', default: '3000' },
      width: { type: 'string', default: '4' },
      keep: { type: 'boolean', default: false },
    },
  });
  const width = Number(values.width);
  return {
    reps: Number(values.reps),
    latencyMs: Number(values['latency-ms']),
    names: ['Lamp', 'Door', 'Bell', 'Fan', 'Tap', 'Gate', 'Vent', 'Blind'].slice(0, width),
    keep: values.keep,
  };
}

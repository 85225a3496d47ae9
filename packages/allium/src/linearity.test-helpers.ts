/**
 * The CPU time of `large` per unit of `small`'s, `size` being how many times larger its input is: CPU time of this
 * process (not wall time), the two measured alternately, the best of `rounds - 1` each after a warm-up round. Load
 * from other processes hardly changes the CPU this one spends, alternating keeps heap and JIT state alike for both
 * sizes, and the minimum filters GC pauses. About 1 when linear; a quadratic step makes it about `size`. The
 * linearity tests hold it under 4; tools/bench/spec measures absolute speed.
 */
export function perUnitCpuRatio(
  small: () => unknown,
  large: () => unknown,
  size: number,
  rounds: number,
): number {
  const cpuMs = (run: () => unknown): number => {
    const started = process.cpuUsage();
    run();
    const used = process.cpuUsage(started);
    return (used.user + used.system) / 1000;
  };
  let bestSmall = Infinity;
  let bestLarge = Infinity;
  for (let round = 0; round < rounds; round += 1) {
    const s = cpuMs(small);
    const l = cpuMs(large);
    if (round === 0) continue; // warm-up
    bestSmall = Math.min(bestSmall, s);
    bestLarge = Math.min(bestLarge, l);
  }
  return bestLarge / (size * Math.max(bestSmall, 1));
}

/** Which fake pids are alive; pass `table.isAlive` as a lease environment's `isPidAlive`. */
export interface FakeProcessTable {
  /** True unless {@link FakeProcessTable.kill} was called for `pid`. */
  readonly isAlive: (pid: number) => boolean;
  /** Marks `pid` dead. */
  kill(pid: number): void;
}

/** Creates a {@link FakeProcessTable} in which every pid is alive until killed. */
export function createFakeProcessTable(): FakeProcessTable {
  const dead = new Set<number>();
  return {
    isAlive: (pid) => !dead.has(pid),
    kill: (pid) => {
      dead.add(pid);
    },
  };
}

/**
 * Exit codes of the `allium-loop` command. Terminal states of a run map onto 0 and 3–7 and 130; see `docs/cli.md`.
 */
export const ExitCode = {
  /** Success; for `run`/`resume`, the goal converged. */
  ok: 0,
  /** The command ran and reported a failure (not converged, spec errors, a failed run). */
  failure: 1,
  /** Usage error: unknown command or flag, bad arguments, or a command that is not available yet. */
  usage: 2,
} as const;

/** One of the documented exit codes. */
export type ExitCodeValue = number;

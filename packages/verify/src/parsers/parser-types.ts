import type { TestCase } from '../test-run.js';

/** Counts one parser read from the text, with the per-test results it could name. */
export interface PartialCounts {
  readonly parser: string;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
  readonly cases: readonly TestCase[];
}

/** A parser of one runner's output: `undefined` when the text does not carry that runner's results. */
export type OutputParser = (text: string) => PartialCounts | undefined;

/** Sums captured integers; `undefined` entries count as 0. */
export function toInt(value: string | undefined): number {
  return value === undefined ? 0 : Number.parseInt(value, 10);
}

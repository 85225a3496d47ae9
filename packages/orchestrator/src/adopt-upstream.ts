import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { UPSTREAM_ADOPTED, upstreamTestHash, type Ledger, type UpstreamLedger } from '@allium-loop/ledger';
import { recordProtectedTests, sha256 } from '@allium-loop/workers';
import { initialLoopState } from './decide/loop-state.js';

/** What adopting an upstream ledger found about its generated tests. */
export interface AdoptedTests {
  /** Paths whose file on disk still has the recorded hash: now protected like tests this engine generated. */
  readonly protectedPaths: readonly string[];
  /** Paths not adopted, each with why (missing file, changed since propagate, no usable hash). */
  readonly skipped: readonly { readonly path: string; readonly why: string }[];
}

/**
 * Checks each of the upstream ledger's `generated_test_hashes` against the file on disk; the ones unchanged are
 * recorded as protected tests (the engine keeps a copy), the others are reported, never trusted.
 */
export async function adoptGeneratedTests(
  cwd: string,
  slug: string,
  upstream: UpstreamLedger,
): Promise<{ tests: Ledger['protectedTests']; report: AdoptedTests }> {
  const skipped: { path: string; why: string }[] = [];
  const matching: string[] = [];
  for (const [path, value] of Object.entries(upstream.generated_test_hashes ?? {})) {
    const hash = upstreamTestHash(value);
    if (hash === undefined) {
      skipped.push({ path, why: 'no sha256 hash recorded' });
      continue;
    }
    const text = await readFile(join(cwd, path), 'utf8').catch(() => undefined);
    if (text === undefined) skipped.push({ path, why: 'file missing' });
    else if (sha256(text) !== hash) skipped.push({ path, why: 'changed since its propagate' });
    else matching.push(path);
  }
  const tests = await recordProtectedTests(cwd, slug, matching, upstream.tick);
  return { tests, report: { protectedPaths: matching, skipped } };
}

/**
 * Starts this engine's state for a run from the upstream skill's ledger: the tick count carried (the loop goes on
 * at the next tick, its caps counting the skill's ticks), the parked open questions, the converged sub-goals, the
 * generated tests' hashes (as protected tests), and the document itself in a history entry, whose witness records
 * and reconciliation the stored ledger keeps. `fresh` is the ledger a new run of the goal would start with. Pure.
 */
export function adoptUpstreamLedger(
  fresh: Ledger,
  upstream: UpstreamLedger,
  tests: Ledger['protectedTests'],
  at: Date,
): Ledger {
  const record = fresh.modeState;
  if (record.kind !== 'spec') throw new Error('only a spec run adopts an upstream ledger');
  const questions = (upstream.open_questions ?? []).map((text, index) => ({
    id: `upstream-q${String(index + 1)}`,
    text,
    classification: 'parked' as const,
    assumption: null,
    answer: null,
    status: 'open' as const,
    raisedAtTick: upstream.tick,
    phase: 'upstream',
  }));
  const subGoals = (upstream.completed_sub_goals ?? []).map((id) => ({
    id,
    slice: { constructs: [] },
    dependsOn: [],
    status: 'converged' as const,
    report: null,
  }));
  return {
    ...fresh,
    tick: upstream.tick,
    questions: [...fresh.questions, ...questions],
    subGoals: [...fresh.subGoals, ...subGoals],
    protectedTests: [...tests],
    history: [
      ...fresh.history,
      {
        at: at.toISOString(),
        kind: UPSTREAM_ADOPTED,
        message: `adopted the ledger the upstream /allium skill wrote (${upstream.mode}, tick ${String(upstream.tick)})`,
        data: JSON.parse(JSON.stringify(upstream)) as Record<string, unknown>,
      },
    ],
    modeState: { ...record, loop: { ...initialLoopState(), tick: upstream.tick } },
  };
}

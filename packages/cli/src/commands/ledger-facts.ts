import type { Ledger } from '@allium-loop/ledger';
import { blockingQuestionTexts, openStore, readLoopState } from '@allium-loop/orchestrator';
import { latestHarnessRecord, parseHarnessRecord, type HarnessRecord } from '@allium-loop/verify';
import type { LedgerFacts } from './verify.js';

/**
 * The harness record `verify` compares the project with: the latest one saved outside the project for this
 * directory (out of an agent's reach), else the one in the most recently updated ledger that has one, else none.
 */
export async function readRecordedHarness(
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<{ record: HarnessRecord; source: string } | undefined> {
  const outside = await latestHarnessRecord(cwd, env);
  if (outside !== undefined)
    return { record: outside.record, source: `run ${outside.slug} (record kept outside the project)` };
  const store = openStore(cwd, env);
  let latest: { record: HarnessRecord; slug: string; at: string } | undefined;
  for (const slug of await store.list()) {
    const loaded = await store.load(slug);
    if (!loaded.ok) continue;
    const state = loaded.value.ledger.modeState;
    const record = parseHarnessRecord(state.kind === 'spec' ? state.harness : undefined);
    if (record !== undefined && (latest === undefined || loaded.value.ledger.updatedAt > latest.at))
      latest = { record, slug, at: loaded.value.ledger.updatedAt };
  }
  return latest === undefined
    ? undefined
    : { record: latest.record, source: `run ${latest.slug} (record in its ledger)` };
}

/**
 * The weed verdict and blocking questions `verify` takes from the most recently updated spec-loop ledger in
 * `.allium-loop/`: the weed term of its last tick (for a decomposed run, of its last slice loop), and the texts of
 * the questions it records as blocking and unanswered — the same rule the loop measures with, so every other open
 * question in the spec is parked. Without a ledger, weed is `not_run` and the note says why.
 */
export async function readLedgerFacts(
  cwd: string,
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<LedgerFacts> {
  const store = openStore(cwd, env);
  let latest: Ledger | undefined;
  for (const slug of await store.list()) {
    const loaded = await store.load(slug);
    if (!loaded.ok || loaded.value.ledger.mode !== 'spec') continue;
    if (latest === undefined || loaded.value.ledger.updatedAt > latest.updatedAt)
      latest = loaded.value.ledger;
  }
  if (latest === undefined) {
    return {
      weed: { status: 'not_run' },
      blockingQuestions: [],
      note: 'no weed verdict: no spec-loop ledger in .allium-loop/',
    };
  }
  const blockingQuestions = blockingQuestionTexts(latest);
  const verdict = latest.verdicts.at(-1);
  if (verdict !== undefined) {
    const weed = verdict.weed;
    return {
      weed:
        weed.status === 'clean'
          ? { status: 'clean' }
          : weed.status === 'dirty'
            ? { status: 'dirty', divergences: weed.divergences.length }
            : { status: 'not_run' },
      blockingQuestions,
      note: `weed verdict from ledger ${latest.slug} (tick ${String(verdict.tick)})`,
    };
  }
  const slices = latest.subGoals
    .map((goal) => ({ goal, state: readLoopState(latest, goal.id) }))
    .filter((s) => (s.state?.verdicts.length ?? 0) > 0);
  const last = slices.at(-1);
  const sliceVerdict = last?.state?.verdicts.at(-1);
  if (last === undefined || sliceVerdict === undefined) {
    return {
      weed: { status: 'not_run' },
      blockingQuestions,
      note: `no weed verdict yet in ledger ${latest.slug}`,
    };
  }
  return {
    weed: sliceVerdict.observation.weed,
    blockingQuestions,
    note: `weed verdict from ledger ${latest.slug}, slice ${last.goal.id} (tick ${String(sliceVerdict.tick)})`,
  };
}

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeLedger } from '@allium-loop/ledger';
import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  makeProject,
  readJournal,
  runCli,
  startCli,
  writeScript,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';
import {
  BROKEN_TALLY,
  CLEAN_WEED,
  DIRTY_WEED,
  FAST_TALLY,
  implementResult,
  listFiles,
  recordFigure,
  seeded,
  waitForJournal,
} from './reliability.test-helpers.js';

const KILLS = Number(process.env['RELIABILITY_KILLS'] ?? 50);
const CHAINS = Number(process.env['RELIABILITY_CHAINS'] ?? 3);
const SEED = Number(process.env['RELIABILITY_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
/** The longest wait after a process's first journal line before it is killed. */
const MAX_DELAY_MS = 3000;

const STEPS = [
  { phase: 'weed', result: DIRTY_WEED },
  {
    phase: 'implement',
    delayMs: 300,
    write: { 'src/tally.js': FAST_TALLY['src/tally.js']! },
    result: implementResult(['src/tally.js']),
  },
  { phase: 'weed', result: CLEAN_WEED },
];

/** What a finished run looks like, compared between interrupted and uninterrupted runs. */
interface FinalState {
  readonly terminal: string;
  readonly fingerprints: readonly string[];
  readonly files: Record<string, string>;
  /** How many scripted steps the replay agent played per phase: a re-run under the same key replays, not advances. */
  readonly steps: Record<string, number>;
}

async function finalState(dir: string): Promise<FinalState> {
  const ledger = JSON.parse(
    await readFile(join(dir, '.allium-loop', `${DRIFT_SLUG}.json`), 'utf8'),
  ) as LooseJson;
  const paths = (await listFiles(dir)).filter(
    (p) => !p.startsWith('.allium-loop/') && !p.startsWith('.git/'),
  );
  const files: Record<string, string> = {};
  for (const path of paths) files[path] = await readFile(join(dir, path), 'utf8');
  const replay = JSON.parse(
    await readFile(join(dir, '.allium-loop', DRIFT_SLUG, 'replay-state.json'), 'utf8'),
  ) as LooseJson;
  return {
    steps: replay['calls'] as Record<string, number>,
    terminal: String(ledger['terminal']?.state),
    fingerprints: (ledger['verdicts'] as LooseJson[]).map((v) => String(v['fingerprint'])),
    files,
  };
}

/**
 * Calls begun again for a phase that already succeeded in the same tick (a new key for finished work): the
 * signature of the known bug named at {@link KNOWN_BUG}.
 */
function rerunsAfterSuccess(journal: readonly LooseJson[]): string[] {
  const succeeded = new Set<string>();
  const phaseOf = new Map<string, string>();
  const reruns: string[] = [];
  for (const event of journal) {
    const key = String(event['key']);
    if (event['type'] === 'intent_begun') {
      const slot = `${String(event['tick'])}/${String(event['phase'])}`;
      phaseOf.set(key, slot);
      if (succeeded.has(slot) && event['phase'] === 'weed') reruns.push(key);
    }
    if (event['type'] === 'intent_ended' && event['status'] === 'succeeded') {
      const slot = phaseOf.get(key);
      if (slot !== undefined) succeeded.add(slot);
    }
  }
  return reruns;
}

/**
 * A call whose outcome was recorded just before the supervisor was killed (before the tick's verdict) must not run
 * again: the driver keeps the last outcome of each loop with its intent's end and replays it on resume. This was a
 * real bug the suite found (weed ran twice, the replay script ran out of steps); it is fixed, so any repeat fails.
 * RELIABILITY_TOLERATE_REPEATS=1 only counts repeats instead, for investigating a regression.
 */
const KNOWN_BUG = process.env['RELIABILITY_TOLERATE_REPEATS'] === '1';

/** Checks what must hold after every kill and every resume; returns how many phases ran again after an outcome. */
async function checkInvariants(dir: string): Promise<number> {
  const text = await readFile(join(dir, '.allium-loop', `${DRIFT_SLUG}.json`), 'utf8').catch(() => undefined);
  if (text !== undefined) {
    const parsed = decodeLedger(JSON.parse(text));
    expect(parsed.ok, parsed.ok ? '' : parsed.issues.join('; ')).toBe(true);
  }
  const journal = await readJournal(dir, DRIFT_SLUG).catch(() => [] as LooseJson[]);
  const ended = new Set<string>();
  let repeated = 0;
  for (const event of journal) {
    const key = event['key'] as string | undefined;
    if (key === undefined) continue;
    if (event['type'] === 'intent_begun' && ended.has(key)) repeated += 1;
    if (event['type'] === 'intent_ended') {
      expect(ended.has(key), `intent ${key} ended twice`).toBe(false);
      ended.add(key);
    }
  }
  return repeated;
}

/** Tallies of one chain of kill-and-resume. */
interface ChainTally {
  kills: number;
  resumes: number;
  repeated: number;
  lost: number;
  knownBug: number;
}

/** Runs the goal, killing it with SIGKILL after random delays and resuming it, until a process finishes. */
async function chain(
  take: () => boolean,
  landed: () => void,
  random: () => number,
  baseline: FinalState,
  tally: ChainTally,
): Promise<void> {
  const dir = await makeProject({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY });
  const agent = ['--agent', 'replay', '--agent-script', await writeScript(dir, STEPS)];
  for (let segment = 0; ; segment += 1) {
    const hasLedger = await readFile(join(dir, '.allium-loop', `${DRIFT_SLUG}.json`)).then(
      () => true,
      () => false,
    );
    const args = hasLedger ? ['resume', DRIFT_SLUG, ...agent] : ['run', DRIFT_GOAL, ...agent];
    if (hasLedger) tally.resumes += 1;
    if (!take()) {
      const run = await runCli(args, dir);
      const reruns = rerunsAfterSuccess(await readJournal(dir, DRIFT_SLUG));
      if (KNOWN_BUG && reruns.length > 0) {
        tally.knownBug += 1;
        console.log(
          `kill suite: ${dir} re-ran a finished call (${reruns.join(', ')}), tolerated by RELIABILITY_TOLERATE_REPEATS=1`,
        );
        return;
      }
      expect(run.code, `${dir}\n${run.stdout}${run.stderr}`).toBe(0);
      break;
    }
    const before = (await readJournal(dir, DRIFT_SLUG).catch(() => [])).length;
    const { child, done } = startCli(args, dir);
    let exited = false;
    void done.then(() => (exited = true));
    await Promise.race([waitForJournal(dir, DRIFT_SLUG, (events) => events.length > before, 60_000), done]);
    await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * MAX_DELAY_MS)));
    if (!exited) child.kill('SIGKILL');
    const run = await done;
    if (run.signal === 'SIGKILL') {
      tally.kills += 1;
      landed();
    }
    await checkInvariants(dir);
    const reruns = rerunsAfterSuccess(await readJournal(dir, DRIFT_SLUG).catch(() => []));
    if (KNOWN_BUG && reruns.length > 0) {
      tally.knownBug += 1;
      console.log(
        `kill suite: ${dir} re-ran a finished call (${reruns.join(', ')}), tolerated by RELIABILITY_TOLERATE_REPEATS=1`,
      );
      await done;
      return;
    }
    expect(reruns, dir).toEqual([]);
    if (run.signal !== 'SIGKILL') {
      expect(run.code, `${dir}\n${run.stdout}${run.stderr}`).toBe(0);
      break;
    }
  }
  tally.repeated = await checkInvariants(dir);
  const journal = await readJournal(dir, DRIFT_SLUG);
  const begun = new Set(journal.filter((e) => e['type'] === 'intent_begun').map((e) => String(e['key'])));
  const ended = new Set(journal.filter((e) => e['type'] === 'intent_ended').map((e) => String(e['key'])));
  tally.lost += [...begun].filter((key) => !ended.has(key)).length;
  expect(await finalState(dir)).toEqual(baseline);
}

describe('kill -9 of the supervisor at random moments, each followed by resume in a fresh process', () => {
  it(
    `${String(KILLS)} kills across runs converge to the uninterrupted run's final state`,
    { timeout: 1_800_000 },
    async () => {
      console.log(
        `reliability kill suite: seed ${String(SEED)} (RELIABILITY_SEED=${String(SEED)} replays it), ${String(KILLS)} kills, ${String(CHAINS)} chains`,
      );
      const began = Date.now();
      const reference = await makeProject({ ...FAST_TALLY, 'src/tally.js': BROKEN_TALLY });
      const uninterrupted = await runCli(
        ['run', DRIFT_GOAL, '--agent', 'replay', '--agent-script', await writeScript(reference, STEPS)],
        reference,
      );
      expect(uninterrupted.code).toBe(0);
      const baseline = await finalState(reference);
      expect(baseline.terminal).toBe('converged');
      const random = seeded(SEED);
      let budget = KILLS;
      const take = () => budget > 0;
      const landed = () => (budget -= 1);
      const tallies: ChainTally[] = [];
      const worker = async () => {
        while (budget > 0) {
          const tally = { kills: 0, resumes: 0, repeated: 0, lost: 0, knownBug: 0 };
          tallies.push(tally);
          await chain(take, landed, random, baseline, tally);
        }
      };
      await Promise.all(Array.from({ length: CHAINS }, worker));
      const sum = (key: keyof ChainTally) => tallies.reduce((total, t) => total + t[key], 0);
      expect(sum('repeated')).toBe(0);
      expect(sum('lost')).toBe(0);
      await recordFigure(
        'kill-resume',
        `${String(sum('kills'))} kills over ${String(tallies.length)} runs (${String(sum('resumes'))} resumes, seed ${String(SEED)}): ${String(tallies.length - sum('knownBug'))}/${String(tallies.length - sum('knownBug'))} converged to the uninterrupted final state ${sum('knownBug') > 0 ? ` (${String(sum('knownBug'))} other(s) re-ran a finished call, tolerated)` : ''}, ledger parsed after every kill, 0 phases repeated under one key, 0 intents lost, ${((Date.now() - began) / 1000).toFixed(0)} s`,
        { kills: sum('kills'), runs: tallies.length, seed: SEED },
      );
    },
  );
});

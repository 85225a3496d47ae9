import { appendFile, readFile, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeLedger } from '@allium-loop/ledger';
import {
  TALLY_PROJECT,
  readJournal,
  readLedger,
  startCli,
  type CliRun,
  type LooseJson,
} from '../e2e/e2e.test-helpers.js';

/** Where the suite writes its figures, one JSON line each; `tools/reliability/report.mjs` reads them. */
export const RESULTS_FILE = fileURLToPath(new URL('../../reliability-results.ndjson', import.meta.url));

/** The scripted `command` agent (see the fixture's header) and the hanging test command. */
export const PLAN_AGENT = fileURLToPath(new URL('./fixtures/plan-agent.mjs', import.meta.url));
export const HANG_TESTS = fileURLToPath(new URL('./fixtures/hang-tests.mjs', import.meta.url));

/** A test command that costs one short node process: it passes when `src/tally.js` closes the tally. */
const CHECK_TESTS = `import { readFileSync } from 'node:fs';
const ok = readFileSync(new URL('../src/tally.js', import.meta.url), 'utf8').includes("'closed'; }");
console.log(ok ? 'ok 1 - closes' : 'not ok 1 - closes');
console.log('1..1');
console.log(ok ? '# pass 1' : '# pass 0');
console.log(ok ? '# fail 0' : '# fail 1');
`;

/** The tally project with a one-process test command instead of `node --test` (cheaper on a loaded machine). */
export const FAST_TALLY: Record<string, string> = {
  ...TALLY_PROJECT,
  'allium-loop.yaml': 'testCommand: node test/check.mjs\n',
  'test/check.mjs': CHECK_TESTS,
};

/** `src/tally.js` that does not close the tally: the check fails. */
export const BROKEN_TALLY = 'export function closeTally(t) { return t; }\n';

/** Records one figure of this run of the suite (appended; small appends are atomic across concurrent tests). */
export async function recordFigure(
  id: string,
  figure: string,
  data: Record<string, unknown> = {},
): Promise<void> {
  await appendFile(
    RESULTS_FILE,
    `${JSON.stringify({ id, figure, ...data, at: new Date().toISOString() })}\n`,
  );
}

/** Writes a plan for {@link PLAN_AGENT} next to the project and returns the `--agent-command` value. */
export async function writePlan(
  dir: string,
  plan: Record<string, LooseJson[]>,
): Promise<{ command: string; calls: () => Promise<Record<string, number>> }> {
  const path = `${dir}-plan.json`;
  await writeFile(path, JSON.stringify(plan));
  return {
    command: `node ${PLAN_AGENT} ${path} {phase} {result_file}`,
    calls: async () =>
      JSON.parse(await readFile(`${path}.calls.json`, 'utf8').catch(() => '{}')) as Record<string, number>,
  };
}

/** Polls `check` until it holds or `timeoutMs` passes (waiting for an event, never for a fixed time). */
export async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check()) && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
}

/** Polls the journal until `found` holds for its events, or `timeoutMs` passes; returns the events last read. */
export async function waitForJournal(
  dir: string,
  slug: string,
  found: (events: LooseJson[]) => boolean,
  timeoutMs = 60_000,
  everyMs = 25,
): Promise<LooseJson[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const events = await readJournal(dir, slug).catch(() => [] as LooseJson[]);
    if (found(events) || Date.now() > until) return events;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** Whether a process (pid > 0) or a process group (pid < 0) still exists. */
export function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Every file under `root`, recursively, as paths relative to it. */
export async function listFiles(root: string, prefix = ''): Promise<string[]> {
  const entries = await readdir(join(root, prefix), { withFileTypes: true }).catch(() => []);
  const nested = await Promise.all(
    entries.map((entry) => {
      const path = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      return entry.isDirectory() ? listFiles(root, path) : Promise.resolve([path]);
    }),
  );
  return nested.flat().sort();
}

/** A weed result naming the tally's one code bug. */
export const DIRTY_WEED = {
  phase: 'weed',
  verdict: 'dirty',
  divergences: [
    {
      subject: 'rule:CloseTally',
      classification: 'code-bug',
      spec: 'specs/tally.allium:7 a closed tally has status closed',
      code: 'src/tally.js:1 closeTally does not close the tally',
    },
  ],
  summary: 'one divergence',
};

/** A clean weed result. */
export const CLEAN_WEED = { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' };

/** An implement result listing `files`. */
export function implementResult(files: readonly string[], summary = 'fixed'): LooseJson {
  return { phase: 'implement', files_changed: files, contested_tests: [], summary };
}

/** mulberry32: a small seeded generator, so a failing sequence of kill moments can be replayed with its seed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Runs `args` in `dir` (then `resume <slug>` once its ledger exists) and kills each process with SIGKILL a random
 * delay (`random() * maxDelayMs`) after its first new journal line, `kills` times, checking after every process
 * that the ledger on disk still parses; then lets the last process finish. Returns that run, the kills and resumes.
 */
export async function killAndResume(
  dir: string,
  slug: string,
  args: readonly string[],
  kills: number,
  random: () => number,
  maxDelayMs: number,
): Promise<{ run: CliRun; kills: number; resumes: number }> {
  let killed = 0;
  let resumes = 0;
  for (;;) {
    const started = await readLedger(dir, slug).then(
      () => true,
      () => false,
    );
    if (started) resumes += 1;
    const before = (await readJournal(dir, slug).catch(() => [])).length;
    const { child, done } = startCli(started ? ['resume', slug] : args, dir);
    if (killed < kills) {
      let exited = false;
      void done.then(() => (exited = true));
      await Promise.race([waitForJournal(dir, slug, (events) => events.length > before, 120_000), done]);
      await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * maxDelayMs)));
      if (!exited) child.kill('SIGKILL');
    }
    const run = await done;
    const text = await readFile(join(dir, '.allium-loop', `${slug}.json`), 'utf8').catch(() => undefined);
    if (text !== undefined) {
      const parsed = decodeLedger(JSON.parse(text));
      if (!parsed.ok) throw new Error(`the ledger does not parse after a kill: ${parsed.issues.join('; ')}`);
    }
    if (run.signal !== 'SIGKILL') return { run, kills: killed, resumes };
    killed += 1;
  }
}

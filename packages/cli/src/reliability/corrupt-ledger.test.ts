import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DRIFT_GOAL, DRIFT_SLUG, makeProject, runCli, writeScript } from '../e2e/e2e.test-helpers.js';
import { CLEAN_WEED, FAST_TALLY, listFiles, recordFigure } from './reliability.test-helpers.js';

/** One finished run, copied for each corruption so the suite pays for a single run. */
let template = '';
let agent: string[] = [];

beforeAll(async () => {
  template = await makeProject(FAST_TALLY);
  agent = [
    '--agent',
    'replay',
    '--agent-script',
    await writeScript(template, [{ phase: 'weed', result: CLEAN_WEED }]),
  ];
  const run = await runCli(['run', DRIFT_GOAL, ...agent], template);
  expect(run.code).toBe(0);
}, 240_000);

const CORRUPTIONS: Record<string, (text: string) => string> = {
  truncated: (text) => text.slice(0, Math.floor(text.length / 2)),
  'invalid JSON': (text) => text.replace('{', '{,'),
  'schema-invalid': (text) => {
    const json = JSON.parse(text) as Record<string, Record<string, unknown>>;
    json['spent'] = { ...json['spent'], usd: 'a lot' };
    return JSON.stringify(json, null, 2);
  },
};

/** The contents of every file under `.allium-loop/`, to show that nothing was overwritten. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const root = join(dir, '.allium-loop');
  const out: Record<string, string> = {};
  for (const path of await listFiles(root)) out[path] = await readFile(join(root, path), 'utf8');
  return out;
}

describe.concurrent('a corrupt ledger', { timeout: 240_000 }, () => {
  for (const [name, corrupt] of Object.entries(CORRUPTIONS)) {
    it(`${name}: resume, status and run stop with exit 1 naming the file and the backup; nothing is overwritten`, async () => {
      const dir = await mkdtemp(join(tmpdir(), 'allium-loop-corrupt-'));
      await cp(template, dir, { recursive: true });
      const ledgerPath = join(dir, '.allium-loop', `${DRIFT_SLUG}.json`);
      const bad = corrupt(await readFile(ledgerPath, 'utf8'));
      await writeFile(ledgerPath, bad);
      const before = await snapshot(dir);
      // One after another: two supervisors started at once race for the lease (process-safety covers that).
      const resume = await runCli(['resume', DRIFT_SLUG, ...agent], dir);
      const status = await runCli(['status', DRIFT_SLUG], dir);
      const run = await runCli(['run', DRIFT_GOAL, ...agent], dir);
      for (const result of [resume, status, run]) {
        expect(result.code, result.stdout + result.stderr).toBe(1);
        expect(result.stderr).toContain(`The ledger ${ledgerPath} is corrupt and was not modified`);
        const backup = /A copy was kept at (\S+\.json)\./.exec(result.stderr)?.[1];
        expect(backup).toBeDefined();
        expect(await readFile(backup!, 'utf8')).toBe(bad);
      }
      expect(await readFile(ledgerPath, 'utf8')).toBe(bad);
      const after = await snapshot(dir);
      // Only backups were added: every file that existed is byte-for-byte unchanged.
      for (const [path, text] of Object.entries(before)) expect(after[path], path).toBe(text);
      expect(
        Object.keys(after)
          .filter((p) => !(p in before))
          .every((p) => p.includes('.corrupt-')),
      ).toBe(true);
      await recordFigure(
        `corrupt-${name.replace(/\W+/g, '-')}`,
        `${name}: resume, status and run each exit 1 naming the ledger and its backup; 0 files overwritten`,
      );
    });
  }
});

import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { runCli } from '../run-cli.js';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  expectUpstreamValid,
  makeProject,
  readJournal,
  readLedger,
} from './e2e.test-helpers.js';

/** The fake Claude Code (tools/fake-agents/claude): prints Claude's stream-json, records how it was called. */
const FAKE_CLAUDE = resolve(fileURLToPath(import.meta.url), '../../../../../tools/fake-agents/claude');
const SECRET = { name: 'TALLY_SERVICE_TOKEN', value: 'tally-secret-value-0123456789' };

/**
 * `run --phase-agents allium` with the claude agent: Claude Code is started as the official `allium:weed` agent,
 * and that agent, as the plugin's agents do, only prints its weed record in its final message. The engine reads
 * the record from there, writes it to the result file (redacted) and the run converges on it.
 */
describe('--phase-agents allium through the claude adapter', { timeout: 300_000 }, () => {
  it('runs weed as allium:weed and converges on the record the agent printed', async () => {
    const dir = await makeProject(TALLY_PROJECT);
    await writeFile(
      join(dir, 'allium-loop.yaml'),
      `testCommand: node --test\nagent:\n  kind: claude\n  binary: ${FAKE_CLAUDE}\n  envAllow: [FAKE_AGENT_SCENARIO]\n`,
    );
    const scratch = await mkdtemp(join(tmpdir(), 'phase-agents-'));
    const recordFile = join(scratch, 'argv.json');
    const record = { verdict: 'clean', divergences: [], summary: `clean (token ${SECRET.value})` };
    const scenario = join(scratch, 'scenario.json');
    await writeFile(
      scenario,
      JSON.stringify({
        behaviour: 'success',
        recordFile,
        resultText: `Weed found no divergence.\n\n\`\`\`json\n${JSON.stringify(record, null, 2)}\n\`\`\`\n`,
      }),
    );
    const io = createRecordingIo(dir, {
      PATH: process.env['PATH'],
      HOME: scratch,
      FAKE_AGENT_SCENARIO: scenario,
      [SECRET.name]: SECRET.value,
    });
    const code = await runCli(['run', DRIFT_GOAL, '--phase-agents', 'allium', '--max-ticks', '2'], io, {
      version: '9.9.9',
    });
    expect(code, io.out() + io.err()).toBe(0);

    // The args the adapter gave Claude Code: print mode, stream-json, the official agent by name; no prompt.
    const called = JSON.parse(await readFile(recordFile, 'utf8')) as { argv: string[]; stdin: string };
    expect(called.argv).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'acceptEdits',
      '--agent',
      'allium:weed',
    ]);
    expect(called.stdin).toContain('weed');

    // The printed record became the result file, valid upstream, with the secret redacted.
    const resultFile = join(dir, '.allium-loop', DRIFT_SLUG, 'results', '1-weed.json');
    const written = await readFile(resultFile, 'utf8');
    expect(written).not.toContain(SECRET.value);
    expect(JSON.parse(written)).toEqual({ ...record, summary: 'clean (token [REDACTED])' });
    await expectUpstreamValid('weed-result.schema.json', JSON.parse(written));

    const ledger = await readLedger(dir, DRIFT_SLUG);
    expect(ledger['terminal'].state).toBe('converged');
    // The flag is recorded with the agent, so a resume keeps it.
    expect(ledger['modeState'].config.agent).toMatchObject({ kind: 'claude', phaseAgents: 'allium' });
    const journal = await readJournal(dir, DRIFT_SLUG);
    expect(JSON.stringify(journal)).toContain("the weed record was read from the agent's final message");
    expect(JSON.stringify(journal)).not.toContain(SECRET.value);
  });
});

import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DRIFT_GOAL,
  DRIFT_SLUG,
  TALLY_PROJECT,
  makeProject,
  readLedger,
  runCli,
  weedStep,
  writeScript,
  type LooseJson,
} from './e2e.test-helpers.js';

// An open question written into the spec by hand: no phase ever classified it.
const UNCLASSIFIED = `${TALLY_PROJECT['specs/tally.allium']!}
open question "May a closed tally be reopened?"
`;

describe('one measure: the loop and allium-loop verify agree on the same tree', { timeout: 180_000 }, () => {
  it('an open question nobody classified is parked for both: the loop converges and verify exits 0', async () => {
    const dir = await makeProject({ ...TALLY_PROJECT, 'specs/tally.allium': UNCLASSIFIED });
    const script = await writeScript(dir, [weedStep(false, { repeat: true })]);
    const run = await runCli(['run', DRIFT_GOAL, '--agent', 'replay', '--agent-script', script], dir);
    expect(run.code).toBe(0);
    const ledger = await readLedger(dir, DRIFT_SLUG);
    const last = (ledger['verdicts'] as LooseJson[]).at(-1)!;
    expect(last['openQuestions']).toEqual({ blocking: 0, parked: 1 });

    const verify = await runCli(['verify', '--json'], dir);
    const document = JSON.parse(verify.stdout) as LooseJson;
    expect(document['observation'].openQuestions).toEqual(last['openQuestions']);
    expect(document['observation'].structuralErrors).toBe(last['structural'].errors);
    expect(document['converged']).toBe(last['converged']);
    expect(verify.code).toBe(0);
  });

  it('a question the run recorded as blocking is blocking for both', async () => {
    const dir = await makeProject({ ...TALLY_PROJECT, 'specs/tally.allium': UNCLASSIFIED });
    const script = await writeScript(dir, [weedStep(false, { repeat: true })]);
    expect((await runCli(['run', DRIFT_GOAL, '--agent', 'replay', '--agent-script', script], dir)).code).toBe(
      0,
    );
    // Someone classifies the question as blocking in the ledger (as elicit or tend would have).
    const path = join(dir, '.allium-loop', `${DRIFT_SLUG}.json`);
    const ledger = JSON.parse(await readFile(path, 'utf8')) as LooseJson;
    ledger['questions'] = [
      {
        id: 'q-1',
        text: 'May a closed tally be reopened?',
        classification: 'blocking',
        assumption: null,
        answer: null,
        status: 'open',
        raisedAtTick: 1,
        phase: 'tend',
      },
    ];
    await writeFile(path, JSON.stringify(ledger));
    const verify = await runCli(['verify', '--json'], dir);
    const document = JSON.parse(verify.stdout) as LooseJson;
    expect(document['observation'].openQuestions).toEqual({ blocking: 1, parked: 0 });
    expect(verify.code).toBe(1);
  });
});

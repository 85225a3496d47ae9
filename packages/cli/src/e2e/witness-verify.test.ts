import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  TALLY_PROJECT,
  expectUpstreamValid,
  makeProject,
  propagateStep,
  readLedger,
  readWitness,
  runCli,
  writeScript,
  type LooseJson,
} from './e2e.test-helpers.js';

const SPEC = TALLY_PROJECT['specs/tally.allium']!;
const TEST = TALLY_PROJECT['test/tally.test.js']!;
const FIXED = TALLY_PROJECT['src/tally.js']!;
const GOAL = 'add a tally counter that can be closed';
const SLUG = 'add-a-tally-counter-that-can-be-closed';

describe('allium-loop verify re-runs the witness as the CI gate', { timeout: 600_000 }, () => {
  it('passes on the tree the run converged on, and fails once a generated test is edited', async () => {
    const dir = await makeProject({
      'package.json': TALLY_PROJECT['package.json']!,
      'allium-loop.yaml': TALLY_PROJECT['allium-loop.yaml']!,
      'src/tally.js': 'export function closeTally(t) { return t; }\n',
    });
    const script = await writeScript(dir, [
      {
        phase: 'elicit',
        write: { 'specs/tally.allium': SPEC },
        result: { phase: 'elicit', spec_path: 'specs/tally.allium', open_questions: [], summary: 'Tally' },
      },
      propagateStep({ 'test/tally.test.js': TEST }, { 'test/tally.test.js': ['CloseTally'] }, 'one test'),
      {
        phase: 'implement',
        write: { 'src/tally.js': FIXED },
        result: {
          phase: 'implement',
          files_changed: ['src/tally.js'],
          contested_tests: [],
          summary: 'closes',
        },
      },
      { phase: 'weed', result: { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' } },
    ]);
    const run = await runCli(['run', GOAL, '--agent', 'replay', '--agent-script', script], dir);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('witness: PASS');
    expect((await readLedger(dir, SLUG))['terminal'].state).toBe('converged');

    const clean = await runCli(['verify', '--json'], dir);
    const passed = JSON.parse(clean.stdout) as LooseJson;
    await expectUpstreamValid('witness-result.schema.json', passed['witness']);
    expect(passed['witness'].verdict).toBe('PASS');
    expect(clean.code).toBe(0);

    // The tree is tampered with after the run: the generated test is weakened so it passes whatever the code does.
    await writeFile(
      join(dir, 'test/tally.test.js'),
      "import { test } from 'node:test';\ntest('CloseTally', () => {});\n",
    );
    const tampered = await runCli(['verify'], dir);
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toContain('witness: FAIL');
    expect(tampered.stdout).toContain('✗ test/tally.test.js edited after propagate → revert + propagate');
    const record = await readWitness(dir, SLUG);
    expect(record['verdict']).toBe('FAIL');
    expect((record['checks'] as LooseJson[]).find((c) => c['name'] === 'no-test-weakened')).toMatchObject({
      result: 'fail',
      ground_truth: 'sha256 mismatch on test/tally.test.js',
    });
  });
});

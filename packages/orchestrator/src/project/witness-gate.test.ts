import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createAgentRunner } from '@allium-loop/agents';
import { DEFAULT_POLICY } from '@allium-loop/evaluator';
import { createFileLedgerStore, createLedger, type Ledger } from '@allium-loop/ledger';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CAPS, type LoopConfig } from '../decide/loop-state.js';
import type { LoopPorts } from '../driver/loop-ports.js';
import { runLoop, type LoopProgress } from '../driver/run-loop.js';
import { createProjectPorts } from './project-ports.js';
import { reconcileAtGate } from './witness-gate.js';

const validateWitness = new Ajv({ allErrors: true, strict: false }).compile(
  JSON.parse(
    await readFile(
      new URL('../../../../docs/schemas/upstream/witness-result.schema.json', import.meta.url),
      'utf8',
    ),
  ) as object,
);

const SPEC = `-- allium: 3
entity Tally {
    count: Integer
    status: open | closed
}

rule CloseTally {
    when: CloseRequested(tally)
    requires: tally.status = open
    ensures: tally.status = closed
}
`;
const TEST_PATH = 'test/tally.test.js';
const GENERATED = `import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeTally } from '../src/tally.js';
test('CloseTally closes an open tally', () => { const t = { status: 'open' }; closeTally(t); assert.equal(t.status, 'closed'); });
`;
/** The cheat: the generated test rewritten so that it passes whatever the code does. */
const WEAKENED = `import { test } from 'node:test';
test('CloseTally closes an open tally', () => {});
`;
const BROKEN = 'export function closeTally(t) { return t; }\n';
const FIXED =
  "export function closeTally(t) { if (t.status !== 'open') throw new Error('closed'); t.status = 'closed'; }\n";
const SLUG = 'add-a-tally';

async function project(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'witness-gate-'));
  const files: Record<string, string> = {
    'package.json': '{ "type": "module", "private": true }\n',
    'src/tally.js': BROKEN,
    'notes.txt': 'a tally\n',
  };
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd: dir });
  git('init', '--quiet');
  git('add', '-A');
  git('commit', '--quiet', '-m', 'start');
  return dir;
}

/** Replay steps: elicit writes the spec, propagate the test, implement the code (`fixes`: honestly, in order). */
function script(implementWrites: readonly string[]): Record<string, unknown> {
  return {
    version: 1,
    steps: [
      {
        phase: 'elicit',
        write: { 'specs/tally.allium': SPEC },
        result: { phase: 'elicit', spec_path: 'specs/tally.allium', open_questions: [], summary: 'Tally' },
      },
      {
        phase: 'propagate',
        write: { [TEST_PATH]: GENERATED },
        result: {
          phase: 'propagate',
          obligations: { total: 1, covered: 1, uncovered: 0 },
          uncovered_obligations: [],
          generated_tests: [
            {
              path: TEST_PATH,
              hash: `sha256:${createHash('sha256').update(GENERATED, 'utf8').digest('hex')}`,
            },
          ],
          summary: 'one',
        },
        loop: { covers: [{ path: TEST_PATH, obligations: ['CloseTally'] }] },
        repeat: true,
      },
      ...implementWrites.map((code, i) => ({
        phase: 'implement',
        write: { 'src/tally.js': code },
        result: { phase: 'implement', files_changed: ['src/tally.js'], contested_tests: [], summary: 'done' },
        ...(i === implementWrites.length - 1 ? { repeat: true } : {}),
      })),
      {
        phase: 'weed',
        result: { phase: 'weed', verdict: 'clean', divergences: [], summary: 'clean' },
        repeat: true,
      },
    ],
  };
}

/**
 * Runs the tally goal through the real project ports, with `tamper` acting on the working tree after each step
 * (an agent phase, once its worker's guards ran, or the engine's measure) — outside every per-phase guard.
 */
async function run(
  dir: string,
  implementWrites: readonly string[],
  tamper: (phase: string, cwd: string) => Promise<void>,
  maxTicks = 3,
) {
  const scriptPath = join(dir, '..', `${dir.split('/').pop() ?? 'x'}-script.json`);
  await writeFile(scriptPath, JSON.stringify(script(implementWrites)));
  const store = createFileLedgerStore({ dir: join(dir, '.allium-loop') });
  const { lease } = await store.acquire(SLUG);
  let ledger: Ledger = {
    ...createLedger({ goal: 'add a tally', slug: SLUG, mode: 'spec', now: new Date() }),
    entry: { path: 'elicit', mode: 'spec-first', reason: 'test', overridden: true },
  };
  await store.save(lease, ledger);
  const agent = createAgentRunner(
    { kind: 'replay', script: scriptPath, stateFile: join(dir, '.allium-loop', 'replay-state.json') },
    { env: process.env },
  );
  const config: LoopConfig = {
    entry: 'elicit',
    mode: 'spec-first',
    caps: { ...DEFAULT_CAPS, maxTicks },
    policy: DEFAULT_POLICY,
    interactive: false,
  };
  const real = createProjectPorts({
    cwd: dir,
    slug: SLUG,
    goal: 'add a tally',
    mode: 'spec-first',
    agent,
    testCommand: { command: 'node --test', source: 'config', reason: 'test' },
    agentTimeoutMs: 600_000,
    testTimeoutMs: 600_000,
    ledger: () => ledger,
  });
  const ports: LoopPorts = {
    ...real,
    runPhase: async (request) => {
      const report = await real.runPhase(request);
      await tamper(request.phase, dir);
      return report;
    },
    measure: async (signal) => {
      const report = await real.measure(signal);
      await tamper('measure', dir);
      return report;
    },
  };
  const progress: LoopProgress[] = [];
  const final = await runLoop({
    store,
    lease,
    ledger,
    config,
    ports,
    clock: { now: () => Date.now() },
    signal: new AbortController().signal,
    onLedger: (next) => {
      ledger = next;
    },
    onProgress: (p) => progress.push(p),
  });
  const journal = (await store.readJournal(SLUG)).events;
  const witness = JSON.parse(
    await readFile(join(dir, '.allium-loop', `${SLUG}.witness.json`), 'utf8'),
  ) as Record<string, unknown>;
  if (!validateWitness(witness)) throw new Error(JSON.stringify(validateWitness.errors));
  return { final, journal, witness, progress };
}

const witnessVerdicts = (journal: readonly { type: string }[]) =>
  journal.flatMap((e) =>
    'data' in e && e.type === 'x-loop.witness' ? [(e.data as { verdict: string }).verdict] : [],
  );

describe(
  'the witness at the convergence gate, with the per-phase guards bypassed',
  { timeout: 600_000 },
  () => {
    it('catches a generated test weakened after the guards ran, restores it, and the loop goes on to converge honestly', async () => {
      const dir = await project();
      let steps = 0;
      const { final, journal, witness } = await run(dir, [BROKEN, FIXED], async (step, cwd) => {
        // Tick 1 only, and never while a guard looks: weakened after implement (the code is still broken, so only
        // the weakened test makes the measure green), put back before weed runs (its guard sees the file intact),
        // weakened again once weed has returned — between the last guard and the convergence gate.
        const plan: Record<string, string> = { implement: WEAKENED, measure: GENERATED, weed: WEAKENED };
        const text = plan[step];
        if (steps >= 3 || text === undefined) return;
        steps += 1;
        await writeFile(join(cwd, TEST_PATH), text);
      });
      expect(steps).toBe(3);
      // No per-phase guard saw anything: the only violation journaled is the witness's.
      expect(journal.filter((e) => e.type === 'violation').map((e) => ('kind' in e ? e.kind : ''))).toEqual([
        'witness_generated_test_changed',
      ]);
      // The run's own reading converged at tick 1 (a green measure, a clean weed): only the witness said no.
      expect(final.verdicts[0]?.converged).toBe(true);
      expect(witnessVerdicts(journal)).toEqual(['FAIL', 'PASS']);
      expect(journal).toContainEqual(
        expect.objectContaining({
          type: 'violation',
          kind: 'witness_generated_test_changed',
          path: TEST_PATH,
          reverted: true,
        }),
      );
      expect(final.terminal?.state).toBe('converged');
      expect(final.terminal?.detail).toContain('the witness passed');
      expect(witness['verdict']).toBe('PASS');
      expect(await readFile(join(dir, TEST_PATH), 'utf8')).toBe(GENERATED);
      expect(await readFile(join(dir, 'src/tally.js'), 'utf8')).toBe(FIXED);
    });

    it('a cheat repeated every tick is never converged on; the record names it with its routing', async () => {
      const dir = await project();
      const { final, journal, witness } = await run(dir, [BROKEN], async (step, cwd) => {
        const plan: Record<string, string> = { implement: WEAKENED, measure: GENERATED, weed: WEAKENED };
        const text = plan[step];
        if (text !== undefined) await writeFile(join(cwd, TEST_PATH), text);
      });
      expect(final.terminal?.state).not.toBe('converged');
      expect(witnessVerdicts(journal).length).toBeGreaterThan(0);
      expect(witnessVerdicts(journal)).not.toContain('PASS');
      expect(witness['verdict']).toBe('FAIL');
      expect(witness['violations']).toContainEqual({
        violation: `${TEST_PATH} edited after propagate`,
        routing: 'revert + propagate',
      });
    });
  },
);

const testNaming = (title: string) => `import { test } from 'node:test';\ntest('${title}', () => {});\n`;

async function writeFiles(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
}

describe('reconcileAtGate: which test files count for the witness coverage', () => {
  it('counts the generated tests and the tests HEAD held before the run, not a test file another phase created', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'reconcile-at-gate-'));
    // Before the run: the spec and the user's own (or an earlier slice job's merged) test of the Tally's fields.
    await writeFiles(dir, {
      'specs/tally.allium': SPEC,
      'test/fields.test.js': testNaming('Tally has a count'),
    });
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@localhost', ...args], { cwd: dir });
    git('init', '--quiet');
    git('add', '-A');
    git('commit', '--quiet', '-m', 'before the run');
    // During the run: nothing generated yet, and an implement phase drops a test naming the rule (a shortcut).
    await writeFiles(dir, { 'test/shortcut.test.js': testNaming('CloseTally closes a tally') });

    const before = await reconcileAtGate(dir, [], []);
    const uncoveredBefore = before.uncovered.map((u) => u.id);
    expect(uncoveredBefore.some((id) => id.includes('CloseTally'))).toBe(true);
    expect(uncoveredBefore.some((id) => id.includes('Tally') && !id.includes('CloseTally'))).toBe(false);

    // The same test, generated by propagate (recorded as protected): now it counts.
    const after = await reconcileAtGate(
      dir,
      [
        {
          path: 'test/shortcut.test.js',
          sha256: '0'.repeat(64),
          storedCopy: 'tests/shortcut.test.js',
          recordedAtTick: 1,
        },
      ],
      [],
    );
    expect(after.uncovered.map((u) => u.id).filter((id) => id.includes('CloseTally'))).toEqual([]);
    expect(after.covered).toBeGreaterThan(before.covered);
  });
});

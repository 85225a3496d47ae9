import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLedger, type Ledger } from '@allium-loop/ledger';
import { escapeHtml, REPORT_CSP } from '@allium-loop/report-html';
import { initialLoopState } from '@allium-loop/orchestrator';
import { afterEach, describe, expect, it } from 'vitest';
import { createRecordingIo } from '../cli-io.js';
import { reportCommand } from '../commands/report.js';
import { buildReportModel } from './build-report-model.js';
import { copyDemoRun, DEMO_SLUG } from './html-report.test-helpers.js';
import { parseTranscriptHeader } from './read-run-artifacts.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function demo(): Promise<string> {
  const cwd = await copyDemoRun();
  dirs.push(cwd);
  return cwd;
}

async function report(cwd: string, args: string[], env: Record<string, string> = {}, opened: string[] = []) {
  const io = createRecordingIo(cwd, env);
  const code = await reportCommand({
    open: (path) => {
      opened.push(path);
      return Promise.resolve(true);
    },
  }).run(args, io);
  return { code, out: io.out(), err: io.err() };
}

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('report --html on the recorded demo run', () => {
  it('writes one self-contained page with every section and the numbers in tables', async () => {
    const cwd = await demo();
    const result = await report(cwd, [DEMO_SLUG, '--html']);
    expect(result.code).toBe(0);
    const file = join(cwd, '.allium-loop', `${DEMO_SLUG}.report.html`);
    expect(result.out).toContain(file);
    const page = await readFile(file, 'utf8');
    expect(page).toContain('add loans, returns and overdue notices to the lending desk');
    expect(page).toContain(`http-equiv="Content-Security-Policy" content="${escapeHtml(REPORT_CSP)}"`);
    expect(page).toContain('uPlot 1.6.32');
    expect(page).not.toMatch(/<script[^>]+src=|<link\b|<img\b|@import/i);
    expect(count(page, 'class="dag-node')).toBe(3);
    expect(count(page, 'data-seq=')).toBe(4);
    // Every agent call with its cost: 12 calls, $0.78 in all.
    expect(page).toMatch(/<td>12<\/td><td>integration<\/td>/);
    expect(page).toContain('$0.78');
    expect(page).toContain('Can an overdue loan be renewed?');
    expect(page).toContain('No renewals: an overdue loan can only be returned.');
    expect(page).toContain('No witness record');
    expect(page).toContain('Uncovered obligations: not recorded');
    for (const id of ['convergence', 'slices', 'timeline', 'witness', 'questions', 'calls', 'caps'])
      expect(page).toContain(`<section id="${id}"`);
  });

  it('--out writes where asked and --open opens that file', async () => {
    const cwd = await demo();
    const opened: string[] = [];
    const result = await report(cwd, [DEMO_SLUG, '--html', '--out', 'out/r.html', '--open'], {}, opened);
    expect(result.code).toBe(0);
    expect(opened).toEqual([join(cwd, 'out', 'r.html')]);
    expect(await readFile(join(cwd, 'out', 'r.html'), 'utf8')).toContain('<!doctype html>');
  });

  it('shows the witness verdict and each check when the run has a witness record', async () => {
    const cwd = await demo();
    const witness = {
      verdict: 'FAIL',
      summary: 'witness FAIL: a generated test changed after propagate',
      checks: [
        { name: 'tests-pass', result: 'pass', ground_truth: 'runner exit 0, 8/8' },
        { name: 'no-test-weakened', result: 'fail', ground_truth: 'sha256 of test/loan.test.js differs' },
      ],
      violations: [{ violation: 'test/loan.test.js edited', routing: 'revert + propagate' }],
      record_path: `.allium-loop/${DEMO_SLUG}.witness.json`,
    };
    await writeFile(join(cwd, '.allium-loop', `${DEMO_SLUG}.witness.json`), JSON.stringify(witness));
    await report(cwd, [DEMO_SLUG, '--html', '--out', 'r.html']);
    const page = await readFile(join(cwd, 'r.html'), 'utf8');
    expect(page).toContain('<span class="badge verdict-FAIL">FAIL</span>');
    expect(page).toContain('sha256 of test/loan.test.js differs');
    expect(page).toContain('revert + propagate');
    expect(page).not.toContain('No witness record');
  });

  it('never shows a secret: environment values and token shapes are redacted, markup is escaped', async () => {
    const cwd = await demo();
    const secret = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789';
    const ledgerFile = join(cwd, '.allium-loop', `${DEMO_SLUG}.json`);
    const ledger = JSON.parse(await readFile(ledgerFile, 'utf8')) as Ledger;
    const questions = ledger.questions.map((q) => ({
      ...q,
      text: `Use key ${secret} or MY_SERVICE_TOKEN? </script><img src=x onerror=alert(1)>`,
      assumption: 'the value of MY_SERVICE_TOKEN is s3cr3t-value-42',
    }));
    await writeFile(ledgerFile, JSON.stringify({ ...ledger, questions }));
    await report(cwd, [DEMO_SLUG, '--html', '--out', 'r.html'], { MY_SERVICE_TOKEN: 's3cr3t-value-42' });
    const page = await readFile(join(cwd, 'r.html'), 'utf8');
    expect(page).not.toContain(secret);
    expect(page).not.toContain('s3cr3t-value-42');
    expect(page).toContain('[REDACTED]');
    expect(page).not.toContain('<img src=x');
    expect(page).toContain('&lt;/script&gt;&lt;img src=x');
  });

  it('refuses --out or --open without --html, and a run that does not exist', async () => {
    const cwd = await demo();
    expect((await report(cwd, [DEMO_SLUG, '--out', 'x.html'])).code).toBe(2);
    const missing = await report(cwd, ['no-such-run', '--html']);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('no run named "no-such-run"');
  });

  it('still prints the text report without --html', async () => {
    const cwd = await demo();
    const result = await report(cwd, [DEMO_SLUG]);
    expect(result.code).toBe(0);
    expect(result.out).toContain('converged after 4 tick(s)');
  });
});

describe('buildReportModel', () => {
  const artifacts = { witness: null, uncovered: new Map(), hasTrace: false, calls: [] };

  it('gives a verify run its own view with kept and reverted ticks', () => {
    const run = {
      spec: { mode: 'verify' as const, config: { command: 'node bench.js', intervalMs: 0 }, defaultCaps: {} },
      agent: { kind: 'replay' },
    };
    const ledger: Ledger = {
      ...createLedger({
        goal: 'make it fast',
        slug: 'make-it-fast',
        mode: 'verify',
        now: new Date(0),
        modeState: { kind: 'verify', run },
      }),
      modeState: {
        kind: 'verify',
        run,
        verify: {
          config: {
            command: 'node bench.js',
            intervalMs: 0,
            hillclimb: { score: 'score (\\d+)', direction: 'max' },
          },
          baseline: { exitCode: 1, score: 3, head: null, outputTail: '' },
          best: { score: 9, tick: 2, commit: null },
          ticks: [
            {
              tick: 1,
              agentOutcome: 'ok',
              exitCode: 1,
              timedOut: false,
              durationMs: 5,
              score: 2,
              kept: false,
              delta: 'score 3 → 2',
              outputHash: 'a',
            },
            {
              tick: 2,
              agentOutcome: 'ok',
              exitCode: 0,
              timedOut: false,
              durationMs: 5,
              score: 9,
              kept: true,
              delta: 'score 3 → 9',
              outputHash: 'b',
            },
          ],
          lastOutput: '',
          fingerprint: null,
        },
      },
    };
    const model = buildReportModel(ledger, [], artifacts, new Date(0));
    expect(model.verify?.climbing).toBe(true);
    expect(model.verify?.ticks.map((t) => t.kept)).toEqual([false, true]);
    expect(model.verify?.best).toEqual({ score: 9, tick: 2 });
    expect(model.stories).toBeNull();
  });

  it('marks a flat tick as a stall and ties caps and guard violations to their ticks', () => {
    const base = createLedger({ goal: 'g', slug: 'g', mode: 'spec', now: new Date(0) });
    const observation = {
      tests: { counts: 'known' as const, passed: 3, failed: 2, skipped: 0, failing: [], exitCode: 1 },
      weed: { status: 'clean' as const },
      structuralErrors: 0,
      openQuestions: { blocking: 0, parked: 0 },
    };
    const verdict = (tick: number) => ({
      tick,
      observation,
      fingerprint: 'same',
      converged: false,
      unmet: [],
    });
    const ledger: Ledger = {
      ...base,
      terminal: {
        state: 'no_progress',
        reason: 'no_progress',
        detail: 'flat',
        at: new Date(0).toISOString(),
      },
      modeState: { kind: 'spec', loop: { ...initialLoopState(), tick: 2, verdicts: [verdict(1), verdict(2)] } },
    };
    const at = new Date(0).toISOString();
    const model = buildReportModel(
      ledger,
      [
        {
          type: 'intent_begun',
          at,
          tick: 2,
          key: 'tick-2/implement/1',
          phase: 'implement',
          action: 'agent-call',
        },
        {
          type: 'violation',
          at,
          tick: 2,
          kind: 'test_edit',
          path: 'test/a.test.js',
          detail: 'edited a protected test',
          reverted: true,
        },
        { type: 'cap_reached', at, tick: 2, cap: 'budget', limit: 1, value: 1.2 },
      ],
      artifacts,
      new Date(0),
    );
    expect(model.ticks.map((t) => t.stall)).toEqual([false, true]);
    expect(model.warnings.map((w) => [w.kind, w.seq])).toEqual([
      ['violation', 2],
      ['cap', 2],
      ['stall', 2],
    ]);
    expect(model.caps.find((c) => c.name === 'no-progress ticks')?.reached).toBe(true);
    expect(model.caps.find((c) => c.name === 'budget')?.reached).toBe(true);
    expect(model.caps.find((c) => c.name === 'ticks per loop')?.reached).toBe(false);
  });
});

describe('parseTranscriptHeader', () => {
  it('reads phase, start, duration, outcome and cost, and the tick and attempt from the file name', () => {
    const text = [
      '# allium-loop agent transcript',
      'phase: implement',
      'started: 2026-01-01T00:00:00.000Z',
      'duration: 250 ms',
      'outcome: failed (exit 1)',
      'cost: $0.0600',
      '--- prompt (10 chars) ---',
      'cost: $9.9900',
    ].join('\n');
    expect(parseTranscriptHeader(text, 'run', '3-implement.2.log')).toEqual({
      scope: 'run',
      tick: 3,
      phase: 'implement',
      attempt: 2,
      startedAt: '2026-01-01T00:00:00.000Z',
      durationMs: 250,
      outcome: 'failed',
      usd: 0.06,
    });
    expect(parseTranscriptHeader('cost: unknown\n', 'run', '1-weed.log').usd).toBeNull();
  });
});

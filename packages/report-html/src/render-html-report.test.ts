import { describe, expect, it } from 'vitest';
import { inlineJson } from './html.js';
import { loadReportAssets } from './load-report-assets.js';
import { renderHtmlReport, type ReportAssets } from './render-html-report.js';
import type { ReportModel } from './report-model.js';

const assets: ReportAssets = {
  chartJs: 'var uPlot = function () {};',
  chartCss: '.u {}',
  chartLibrary: 'uPlot test',
};

function model(overrides: Partial<ReportModel> = {}): ReportModel {
  return {
    generatedAt: '2026-01-01T00:00:00.000Z',
    run: {
      slug: 'a-run',
      goal: 'a goal',
      mode: 'spec',
      status: 'terminal',
      terminal: { state: 'max_ticks', reason: 'cap', detail: 'stopped at the tick cap (6)' },
      entry: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    },
    spend: { usd: null, unknownCalls: 2, agentCalls: 2, wallMs: 61_000, tokens: { input: 0, output: 0 } },
    caps: [{ name: 'ticks per loop', limit: '6', used: '6', reached: true }],
    ticks: [],
    obligationsNote: null,
    slices: [],
    phases: [],
    witness: null,
    questions: [],
    calls: [],
    warnings: [],
    verify: null,
    stories: null,
    ...overrides,
  };
}

describe('renderHtmlReport', () => {
  it('escapes run data everywhere, including inside the chart data script', () => {
    const hostile = '</script><script>alert(1)</script>';
    const page = renderHtmlReport(
      model({
        run: { ...model().run, goal: hostile },
        ticks: [
          {
            seq: 1,
            scope: hostile,
            tick: 1,
            passed: 1,
            failed: 0,
            weed: 'clean',
            divergences: 0,
            uncoveredObligations: null,
            blocking: 0,
            parked: 0,
            structuralErrors: 0,
            usd: null,
            converged: false,
            stall: false,
          },
        ],
      }),
      assets,
    );
    expect(page).not.toContain('<script>alert(1)');
    expect(page.match(/<script\b/g)?.length).toBe(3);
    expect(page).toContain('&lt;/script&gt;');
  });

  it('says so plainly when there is nothing to show, and marks a reached cap', () => {
    const page = renderHtmlReport(model(), assets);
    expect(page).toContain('No tick was measured.');
    expect(page).toContain('The goal was not split into slices');
    expect(page).toContain('No agent call was recorded.');
    expect(page).toContain('No witness record');
    expect(page).toContain('⚠ yes');
    expect(page).toContain('unknown'); // spend of calls without a known cost is never shown as $0
  });

  it('gives verify and stories runs their own views', () => {
    const verify = renderHtmlReport(
      model({
        run: { ...model().run, mode: 'verify' },
        verify: {
          command: 'npm test',
          climbing: true,
          direction: 'max',
          baseline: { exitCode: 1, score: 3 },
          best: { score: 5, tick: 1 },
          ticks: [
            {
              tick: 1,
              agentOutcome: 'ok',
              exitCode: 0,
              timedOut: false,
              score: 5,
              kept: true,
              delta: '3 → 5',
            },
            {
              tick: 2,
              agentOutcome: 'ok',
              exitCode: 1,
              timedOut: false,
              score: 4,
              kept: false,
              delta: '5 → 4',
            },
          ],
        },
      }),
      assets,
    );
    expect(verify).toContain('id="chart-verify"');
    expect(verify).toContain('1 tick(s) kept, 1 reverted');
    expect(verify).toContain('✗ reverted');
    expect(verify).not.toContain('id="convergence"');
    const stories = renderHtmlReport(
      model({
        run: { ...model().run, mode: 'stories' },
        stories: {
          iterations: [
            { tick: 1, story: 'US-1', title: 'Log in', verdict: 'REJECT', reason: 'no test', blocked: false },
            { tick: 2, story: 'US-1', title: 'Log in', verdict: 'PASS', reason: null, blocked: false },
          ],
        },
      }),
      assets,
    );
    expect(stories).toContain('<section id="stories"');
    expect(stories).toMatch(/<th scope="row">US-1<\/th><td>Log in<\/td><td>PASS<\/td><td>2<\/td>/);
  });
});

describe('inlineJson', () => {
  it('cannot close its script element or open a comment', () => {
    const text = inlineJson({ a: '</script><!-- & \u2028' }).value;
    expect(text).not.toMatch(/[<>&\u2028]/);
    expect(JSON.parse(text)).toEqual({ a: '</script><!-- & \u2028' });
  });
});

describe('loadReportAssets', () => {
  it('reads the pinned uPlot build', async () => {
    const loaded = await loadReportAssets();
    expect(loaded.chartLibrary).toBe('uPlot 1.6.32');
    expect(loaded.chartJs).toContain('var uPlot=');
    expect(loaded.chartCss).toContain('.uplot');
  });
});

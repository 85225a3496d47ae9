import { drawCharts } from './client-script.js';
import { html, inlineJson, raw } from './html.js';
import type { ReportModel } from './report-model.js';
import { REPORT_CSS } from './report-styles.js';
import { renderAgentCalls } from './sections/render-agent-calls.js';
import { renderConvergence } from './sections/render-convergence.js';
import { renderStoriesView, renderVerifyView } from './sections/render-mode-views.js';
import { renderOverview } from './sections/render-overview.js';
import { renderQuestions } from './sections/render-questions.js';
import { renderSliceDag } from './sections/render-slice-dag.js';
import { renderTimeline } from './sections/render-timeline.js';
import { renderWitness } from './sections/render-witness.js';

/** The chart library's code and stylesheet, inlined into every report. */
export interface ReportAssets {
  readonly chartJs: string;
  readonly chartCss: string;
  /** Name and version, printed in the footer, e.g. `uPlot 1.6.32`. */
  readonly chartLibrary: string;
}

/**
 * The page's security policy: nothing may be fetched (no network, no CDN, no images but inline ones); only the
 * inline script and styles run.
 */
export const REPORT_CSP =
  "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/** Makes inline code safe inside a `<script>` or `<style>` element (no closing tag can appear in it). */
function inlineCode(code: string, element: 'script' | 'style'): string {
  return code.replace(new RegExp(`</(${element})`, 'gi'), '<\\/$1');
}

/**
 * Renders one self-contained HTML page for a run: overview, caps and warnings, the convergence chart and table,
 * the slice DAG, the phase timeline, the witness, the questions, every agent call, and the verify or stories
 * view for mode runs. Pure: the same model and assets give the same bytes. Every number is also in a table, so
 * the page reads with JavaScript off.
 */
export function renderHtmlReport(model: ReportModel, assets: ReportAssets): string {
  const chartData = { ticks: model.ticks, warnings: model.warnings, verify: model.verify };
  const isModeRun = model.verify !== null || model.stories !== null;
  const page = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${REPORT_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="allium-loop">
<title>allium-loop · ${model.run.slug} · ${model.run.terminal?.state ?? model.run.status}</title>
<style>${raw(inlineCode(assets.chartCss, 'style'))}</style>
<style>${raw(inlineCode(REPORT_CSS, 'style'))}</style>
</head>
<body>
${renderOverview(model)}
${model.verify === null ? '' : renderVerifyView(model.verify)}
${model.stories === null ? '' : renderStoriesView(model.stories)}
${isModeRun && model.ticks.length === 0 ? '' : renderConvergence(model)}
${isModeRun && model.slices.length === 0 ? '' : renderSliceDag(model.slices)}
${renderTimeline(model.phases)}
${renderWitness(model.witness, model.run.slug)}
${renderQuestions(model.questions)}
${renderAgentCalls(model.calls, model.spend)}
<footer>Self-contained: no network requests. Charts drawn with ${assets.chartLibrary} (MIT), inlined.</footer>
<script type="application/json" id="report-data">${inlineJson(chartData)}</script>
<script>${raw(inlineCode(assets.chartJs, 'script'))}</script>
<script>${raw(inlineCode(`(${drawCharts.toString()})(uPlot);`, 'script'))}</script>
</body>
</html>
`;
  return page.value;
}

/**
 * @allium-loop/report-html — the self-contained HTML report of a run. The CLI builds a {@link ReportModel} from
 * the ledger and journal; {@link renderHtmlReport} turns it into one page with the pinned chart library (uPlot)
 * inlined, and {@link loadReportAssets} reads that library from this package's dependencies.
 */
export { escapeHtml } from './html.js';
export { loadReportAssets, ReportAssetsError } from './load-report-assets.js';
export { REPORT_CSP, renderHtmlReport, type ReportAssets } from './render-html-report.js';
export type {
  AgentCallRow,
  CapRow,
  PhaseSpan,
  QuestionRow,
  ReportModel,
  RunSummary,
  SliceNode,
  SpendSummary,
  StoriesView,
  TickRow,
  VerifyView,
  WarningRow,
  WitnessSummary,
} from './report-model.js';

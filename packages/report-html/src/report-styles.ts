/**
 * The report's stylesheet. Colours follow the Okabe–Ito palette (distinguishable with colour-vision deficiencies)
 * and every state is also written out in words, so nothing depends on colour alone.
 */
export const REPORT_CSS = `
:root { color-scheme: light; --ok:#009E73; --bad:#D55E00; --warn:#E69F00; --info:#0072B2; --muted:#595959;
  --ok-bg:#d9f2ea; --bad-bg:#f8dccb; --warn-bg:#fcebc8; --info-bg:#d6e8f5; --idle-bg:#ececec; --line:#c9c9c9; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a1a1a; background: #fff;
  margin: 0 auto; padding: 24px; max-width: 1120px; }
h1 { font-size: 1.6rem; margin: .2rem 0 .6rem; }
h2 { font-size: 1.25rem; margin: 2rem 0 .6rem; padding-bottom: .25rem; border-bottom: 2px solid var(--line); }
h3 { font-size: 1.05rem; margin: 1.2rem 0 .4rem; }
code { font: 0.9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.kicker { color: var(--muted); margin: 0; font-size: .9rem; }
.outcome { font-size: 1.05rem; }
.note { color: var(--muted); font-style: italic; }
.totals { display: flex; flex-wrap: wrap; gap: .5rem 1.5rem; margin: 1rem 0; }
.totals div { min-width: 7rem; }
.totals dt { color: var(--muted); font-size: .8rem; text-transform: uppercase; letter-spacing: .03em; }
.totals dd { margin: 0; font-size: 1.15rem; font-weight: 600; }
.badge { display: inline-block; padding: .05rem .5rem; border-radius: .8rem; border: 1.5px solid currentColor;
  font-weight: 600; font-size: .85rem; background: var(--idle-bg); color: #1a1a1a; }
.state-converged, .verdict-PASS { background: var(--ok-bg); border-color: var(--ok); }
.state-failed, .state-no_progress, .state-max_ticks, .state-budget_exhausted, .state-timed_out, .verdict-FAIL { background: var(--bad-bg); border-color: var(--bad); }
.state-blocked, .state-awaiting_input, .state-cancelled, .verdict-INCONCLUSIVE { background: var(--warn-bg); border-color: var(--warn); }
.state-running { background: var(--info-bg); border-color: var(--info); }
table { border-collapse: collapse; width: 100%; margin: .5rem 0 1rem; font-size: .88rem; }
th, td { border: 1px solid var(--line); padding: .25rem .45rem; text-align: left; vertical-align: top; }
thead th { background: #f2f2f2; }
tbody tr:nth-child(even) { background: #fafafa; }
tr.warn td, tr.warn th { background: var(--warn-bg); }
tr.ok td:last-child { color: #005c43; font-weight: 600; }
table.ticks td:nth-child(n+3) { text-align: right; }
table.ticks td:last-child { text-align: left; }
.warnings { padding-left: 1.2rem; }
.warnings li { margin: .2rem 0; }
.chart { min-height: 120px; margin: .5rem 0; }
.nojs { color: var(--muted); border: 1px dashed var(--line); padding: 1rem; }
.dag-wrap { overflow-x: auto; }
.dag { max-width: 100%; height: auto; }
.dag-node rect { fill: var(--idle-bg); stroke: #7a7a7a; stroke-width: 2; }
.dag-node.state-converged rect { fill: var(--ok-bg); stroke: var(--ok); }
.dag-node.state-failed rect { fill: var(--bad-bg); stroke: var(--bad); }
.dag-node.state-blocked rect { fill: var(--warn-bg); stroke: var(--warn); stroke-dasharray: 6 3; }
.dag-node.state-running rect { fill: var(--info-bg); stroke: var(--info); }
.dag-node.state-skipped rect { fill: #fff; stroke-dasharray: 2 3; }
.dag-id { font: 600 13px system-ui, sans-serif; fill: #1a1a1a; }
.dag-state { font: 12px system-ui, sans-serif; fill: #333; }
.dag-wave { font: 600 12px system-ui, sans-serif; fill: var(--muted); text-transform: uppercase; }
.dag-edge { fill: none; stroke: #6b6b6b; stroke-width: 1.6; }
#dag-arrow path { fill: #6b6b6b; }
.bar-col { width: 32%; }
.bar { display: block; height: .8rem; background: var(--info); border-radius: 2px; min-width: 2px; }
.bar.phase-implement { background: var(--ok); }
.bar.phase-propagate { background: var(--warn); }
.bar.phase-weed { background: #CC79A7; }
.bar.phase-tend, .bar.phase-distill, .bar.phase-elicit { background: #56B4E9; }
footer { margin-top: 2rem; color: var(--muted); font-size: .85rem; }
@media print {
  body { max-width: none; padding: 0; font-size: 11pt; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  h2 { break-after: avoid; }
  tr, .dag, .chart { break-inside: avoid; }
  thead { display: table-header-group; }
  .nojs { display: none; }
}
@page { margin: 14mm; }
`;

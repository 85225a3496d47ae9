import { formatDuration, formatUsd, html, type SafeHtml } from '../html.js';
import type { ReportModel } from '../report-model.js';

/** The head of the report: goal, how the run ended, totals, caps and every warning. */
export function renderOverview(model: ReportModel): SafeHtml {
  const { run, spend } = model;
  const state = run.terminal?.state ?? run.status;
  return html`<header>
  <p class="kicker">allium-loop report · ${run.mode} run · generated ${model.generatedAt}</p>
  <h1>${run.goal}</h1>
  <p class="outcome"><span class="badge state-${state}">${state.replace(/_/g, ' ')}</span>
  ${run.terminal === null ? `still ${run.status}` : run.terminal.detail}</p>
  <dl class="totals">
    <div><dt>run</dt><dd><code>${run.slug}</code></dd></div>
    ${run.entry === null ? '' : html`<div><dt>entry</dt><dd>${run.entry}</dd></div>`}
    <div><dt>ticks measured</dt><dd data-total="ticks">${model.ticks.length}</dd></div>
    <div><dt>slices</dt><dd>${model.slices.length}</dd></div>
    <div><dt>agent calls</dt><dd>${spend.agentCalls}</dd></div>
    <div><dt>spend</dt><dd>${formatUsd(spend.usd, spend.unknownCalls)}</dd></div>
    <div><dt>time</dt><dd>${formatDuration(spend.wallMs)}</dd></div>
    <div><dt>tokens in / out</dt><dd>${spend.tokens.input} / ${spend.tokens.output}</dd></div>
  </dl>
</header>
<section id="caps" aria-labelledby="caps-h">
  <h2 id="caps-h">Caps and warnings</h2>
  <table>
    <thead><tr><th scope="col">cap</th><th scope="col">limit</th><th scope="col">used</th><th scope="col">reached</th></tr></thead>
    <tbody>${model.caps.map(
      (cap) =>
        html`<tr class="${cap.reached ? 'warn' : ''}"><th scope="row">${cap.name}</th><td>${cap.limit}</td><td>${cap.used}</td><td>${cap.reached ? '⚠ yes' : 'no'}</td></tr>`,
    )}</tbody>
  </table>
  ${
    model.warnings.length === 0
      ? html`<p>No stall, cap or guard warnings.</p>`
      : html`<ul class="warnings">${model.warnings.map(
          (w) =>
            html`<li class="warning-${w.kind}">⚠ <strong>${w.kind.replace('_', ' ')}</strong> · ${w.scope}${w.tick === null ? '' : ` tick ${String(w.tick)}`} — ${w.text}</li>`,
        )}</ul>`
  }
</section>`;
}

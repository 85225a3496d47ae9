import { formatDuration, formatUsd, html, type SafeHtml } from '../html.js';
import type { AgentCallRow, SpendSummary } from '../report-model.js';

/** Every agent call with its duration, outcome and cost, and the total against the ledger's count. */
export function renderAgentCalls(calls: readonly AgentCallRow[], spend: SpendSummary): SafeHtml {
  const known = calls.filter((c) => c.usd !== null);
  const sum = known.reduce((total, c) => total + (c.usd ?? 0), 0);
  const mismatch =
    calls.length === spend.agentCalls
      ? ''
      : html`<p class="note">The ledger counts ${spend.agentCalls} agent call(s); ${calls.length} transcript(s) were found.</p>`;
  return html`<section id="calls" aria-labelledby="calls-h">
  <h2 id="calls-h">Agent calls</h2>
  ${mismatch}
  ${
    calls.length === 0
      ? html`<p>No agent call was recorded.</p>`
      : html`<table class="calls">
    <thead><tr><th scope="col">#</th><th scope="col">scope</th><th scope="col">tick</th><th scope="col">phase</th><th scope="col">attempt</th><th scope="col">started (UTC)</th><th scope="col">duration</th><th scope="col">outcome</th><th scope="col">cost</th></tr></thead>
    <tbody>${calls.map(
      (c, i) =>
        html`<tr class="${c.outcome === 'ok' ? '' : 'warn'}"><td>${i + 1}</td><td>${c.scope}</td><td>${c.tick ?? '–'}</td><td>${c.phase}</td><td>${c.attempt}</td><td>${c.startedAt?.slice(11, 19) ?? '–'}</td><td>${c.durationMs === null ? '–' : formatDuration(c.durationMs)}</td><td>${c.outcome}</td><td>${c.usd === null ? 'unknown' : `$${c.usd.toFixed(4)}`}</td></tr>`,
    )}</tbody>
    <tfoot><tr><th scope="row" colspan="8">total of the calls listed${known.length < calls.length ? ` (${String(calls.length - known.length)} with unknown cost)` : ''}</th><td>${formatUsd(sum, calls.length - known.length)}</td></tr></tfoot>
  </table>`
  }
</section>`;
}

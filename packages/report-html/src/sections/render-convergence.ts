import { count, formatUsd, html, type SafeHtml } from '../html.js';
import type { ReportModel, TickRow } from '../report-model.js';

function marks(row: TickRow): string {
  const out: string[] = [];
  if (row.converged) out.push('✓ converged');
  if (row.stall) out.push('⚠ no progress');
  return out.join(' ');
}

/** The convergence picture: one chart point per tick (drawn by the inline script) and the same numbers as a table. */
export function renderConvergence(model: ReportModel): SafeHtml {
  const rows = model.ticks;
  const anyObligations = rows.some((r) => r.uncoveredObligations !== null);
  return html`<section id="convergence" aria-labelledby="convergence-h">
  <h2 id="convergence-h">Convergence, tick by tick</h2>
  <p>Every measured tick in the order it ran: the run's own ticks and each slice's, which are marked by scope.
  Tests passing and failing, weed divergences, uncovered obligations and open questions on the left axis; the run's
  spend so far on the right. Dashed lines mark stalls and caps.</p>
  <div class="chart" id="chart-convergence" role="img" aria-label="Chart of the numbers in the table below, one point per tick">
    <p class="nojs">The chart needs JavaScript; the table below holds the same numbers.</p>
  </div>
  ${model.obligationsNote === null || anyObligations ? '' : html`<p class="note">Uncovered obligations: ${model.obligationsNote}</p>`}
  ${
    rows.length === 0
      ? html`<p>No tick was measured.</p>`
      : html`<table class="ticks">
    <thead><tr><th scope="col">#</th><th scope="col">scope</th><th scope="col">tick</th><th scope="col">passing</th><th scope="col">failing</th><th scope="col">weed</th><th scope="col">divergences</th><th scope="col">uncovered obligations</th><th scope="col">blocking questions</th><th scope="col">parked questions</th><th scope="col">spec errors</th><th scope="col">spend</th><th scope="col">marks</th></tr></thead>
    <tbody>${rows.map(
      (r) =>
        html`<tr class="${r.stall ? 'warn' : r.converged ? 'ok' : ''}" data-seq="${r.seq}"><td>${r.seq}</td><td>${r.scope}</td><td>${r.tick}</td><td>${count(r.passed)}</td><td>${count(r.failed)}</td><td>${r.weed}</td><td>${r.divergences}</td><td>${count(r.uncoveredObligations)}</td><td>${r.blocking}</td><td>${r.parked}</td><td>${r.structuralErrors}</td><td>${r.usd === null ? '–' : formatUsd(r.usd)}</td><td>${marks(r)}</td></tr>`,
    )}</tbody>
  </table>`
  }
</section>`;
}

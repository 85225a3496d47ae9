import { formatDuration, html, type SafeHtml } from '../html.js';
import type { PhaseSpan } from '../report-model.js';

function clock(iso: string): string {
  return iso.length >= 19 ? iso.slice(11, 19) : iso;
}

/** Every phase the journal recorded, with its duration and a bar placed on the run's time line. */
export function renderTimeline(phases: readonly PhaseSpan[]): SafeHtml {
  if (phases.length === 0)
    return html`<section id="timeline" aria-labelledby="timeline-h"><h2 id="timeline-h">Phase timeline</h2><p>The journal records no phase.</p></section>`;
  const starts = phases.map((p) => Date.parse(p.startedAt));
  const t0 = Math.min(...starts);
  const t1 = Math.max(...phases.map((p, i) => (starts[i] ?? t0) + p.durationMs));
  const span = Math.max(1, t1 - t0);
  const total = phases.reduce((sum, p) => sum + p.durationMs, 0);
  return html`<section id="timeline" aria-labelledby="timeline-h">
  <h2 id="timeline-h">Phase timeline</h2>
  <p>${phases.length} phase(s), ${formatDuration(total)} inside phases over ${formatDuration(span)} from the first phase to the last.</p>
  <table class="timeline">
    <thead><tr><th scope="col">scope</th><th scope="col">tick</th><th scope="col">phase</th><th scope="col">started (UTC)</th><th scope="col">duration</th><th scope="col">outcome</th><th scope="col" class="bar-col">when</th></tr></thead>
    <tbody>${phases.map((p, i) => {
      const left = (((starts[i] ?? t0) - t0) / span) * 100;
      const width = Math.max(0.6, (p.durationMs / span) * 100);
      return html`<tr class="${p.outcome === 'ok' ? '' : 'warn'}"><td>${p.scope}</td><td>${p.tick}</td><td>${p.phase}</td><td>${clock(p.startedAt)}</td><td>${formatDuration(p.durationMs)}</td><td>${p.outcome}${p.detail === null ? '' : ` — ${p.detail}`}</td><td class="bar-col"><span class="bar phase-${p.phase}" style="margin-left:${left.toFixed(2)}%;width:${Math.min(width, 100 - left).toFixed(2)}%"></span></td></tr>`;
    })}</tbody>
  </table>
</section>`;
}

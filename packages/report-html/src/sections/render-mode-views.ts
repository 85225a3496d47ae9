import { count, html, type SafeHtml } from '../html.js';
import type { StoriesView, VerifyView } from '../report-model.js';

/** A `--verify` run: the score (or exit code) per tick, kept or reverted, as a chart and a table. */
export function renderVerifyView(view: VerifyView): SafeHtml {
  const kept = view.ticks.filter((t) => t.kept === true).length;
  return html`<section id="verify" aria-labelledby="verify-h">
  <h2 id="verify-h">Verify command, tick by tick</h2>
  <p>Command: <code>${view.command}</code>${
    view.climbing
      ? html` · hill-climb, ${view.direction === 'min' ? 'lower' : 'higher'} is better · ${kept} tick(s) kept, ${view.ticks.length - kept} reverted${view.best === null ? '' : html` · best score ${count(view.best.score)} at tick ${view.best.tick}`}`
      : ''
  }</p>
  <div class="chart" id="chart-verify" role="img" aria-label="Chart of the verify results in the table below, one point per tick">
    <p class="nojs">The chart needs JavaScript; the table below holds the same numbers.</p>
  </div>
  <table>
    <thead><tr><th scope="col">tick</th><th scope="col">agent</th><th scope="col">exit</th>${view.climbing ? html`<th scope="col">score</th><th scope="col">kept</th>` : ''}<th scope="col">change</th></tr></thead>
    <tbody>
    ${view.baseline === null ? '' : html`<tr><td>0</td><td>baseline</td><td>${count(view.baseline.exitCode)}</td>${view.climbing ? html`<td>${count(view.baseline.score)}</td><td>–</td>` : ''}<td></td></tr>`}
    ${view.ticks.map(
      (t) =>
        html`<tr class="${t.kept === false ? 'warn' : ''}"><td>${t.tick}</td><td>${t.agentOutcome}</td><td>${t.timedOut ? 'timed out' : count(t.exitCode)}</td>${view.climbing ? html`<td>${count(t.score)}</td><td>${t.kept === true ? '✓ kept' : '✗ reverted'}</td>` : ''}<td>${t.delta}</td></tr>`,
    )}
    </tbody>
  </table>
</section>`;
}

/** A `--stories` run: each iteration's story and verdict, and where each story ended. */
export function renderStoriesView(view: StoriesView): SafeHtml {
  const latest = new Map<string, StoriesView['iterations'][number]>();
  for (const it of view.iterations) latest.set(it.story, it);
  return html`<section id="stories" aria-labelledby="stories-h">
  <h2 id="stories-h">Stories</h2>
  <table>
    <thead><tr><th scope="col">story</th><th scope="col">title</th><th scope="col">last verdict</th><th scope="col">iterations</th></tr></thead>
    <tbody>${[...latest.values()].map(
      (it) =>
        html`<tr class="${it.verdict === 'PASS' ? 'ok' : 'warn'}"><th scope="row">${it.story}</th><td>${it.title}</td><td>${it.verdict}${it.blocked ? ' (blocked)' : ''}</td><td>${view.iterations.filter((i) => i.story === it.story).length}</td></tr>`,
    )}</tbody>
  </table>
  <h3>Iterations</h3>
  <table>
    <thead><tr><th scope="col">tick</th><th scope="col">story</th><th scope="col">verdict</th><th scope="col">reason</th></tr></thead>
    <tbody>${view.iterations.map(
      (it) =>
        html`<tr class="${it.verdict === 'PASS' ? '' : 'warn'}"><td>${it.tick}</td><td>${it.story}</td><td>${it.verdict}${it.blocked ? ' (blocked)' : ''}</td><td>${it.reason ?? ''}</td></tr>`,
    )}</tbody>
  </table>
</section>`;
}

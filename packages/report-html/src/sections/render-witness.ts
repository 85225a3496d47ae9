import { html, type SafeHtml } from '../html.js';
import type { WitnessSummary } from '../report-model.js';

/** The witness verdict and each check with the ground truth it read; says so plainly when there is no record. */
export function renderWitness(witness: WitnessSummary | null, slug: string): SafeHtml {
  if (witness === null) {
    return html`<section id="witness" aria-labelledby="witness-h"><h2 id="witness-h">Witness</h2>
  <p>No witness record: <code>.allium-loop/${slug}.witness.json</code> does not exist for this run, so convergence was not
  confirmed by an independent witness pass.</p></section>`;
  }
  return html`<section id="witness" aria-labelledby="witness-h">
  <h2 id="witness-h">Witness</h2>
  <p><span class="badge verdict-${witness.verdict}">${witness.verdict}</span> ${witness.summary}</p>
  <table>
    <thead><tr><th scope="col">check</th><th scope="col">result</th><th scope="col">ground truth</th></tr></thead>
    <tbody>${witness.checks.map(
      (c) =>
        html`<tr class="${c.result === 'pass' ? '' : 'warn'}"><th scope="row">${c.name}</th><td>${c.result}</td><td>${c.groundTruth}</td></tr>`,
    )}</tbody>
  </table>
  ${
    witness.violations.length === 0
      ? ''
      : html`<h3>Violations</h3><ul>${witness.violations.map((v) => html`<li>${v.violation} → <strong>${v.routing}</strong></li>`)}</ul>`
  }
</section>`;
}

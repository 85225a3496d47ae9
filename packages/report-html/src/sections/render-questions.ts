import { html, type SafeHtml } from '../html.js';
import type { QuestionRow } from '../report-model.js';

/** Open questions: blocking ones (escalated) and parked ones with the assumption the run made meanwhile. */
export function renderQuestions(questions: readonly QuestionRow[]): SafeHtml {
  const blocking = questions.filter((q) => q.classification === 'blocking');
  const parked = questions.filter((q) => q.classification === 'parked');
  const table = (rows: readonly QuestionRow[], parkedView: boolean) =>
    rows.length === 0
      ? html`<p>None.</p>`
      : html`<table>
    <thead><tr><th scope="col">id</th><th scope="col">question</th><th scope="col">status</th><th scope="col">${parkedView ? 'assumed meanwhile' : 'answer'}</th><th scope="col">raised</th></tr></thead>
    <tbody>${rows.map(
      (q) =>
        html`<tr><th scope="row"><code>${q.id}</code></th><td>${q.text}</td><td>${q.status}</td><td>${(parkedView ? q.assumption : q.answer) ?? '–'}${parkedView && q.answer !== null ? html`<br>answer: ${q.answer}` : ''}</td><td>tick ${q.raisedAtTick}, ${q.phase}</td></tr>`,
    )}</tbody>
  </table>`;
  return html`<section id="questions" aria-labelledby="questions-h">
  <h2 id="questions-h">Open questions</h2>
  <h3>Blocking (${blocking.length})</h3>${table(blocking, false)}
  <h3>Parked (${parked.length})</h3>${table(parked, true)}
</section>`;
}

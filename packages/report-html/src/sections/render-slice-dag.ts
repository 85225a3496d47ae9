import { html, type SafeHtml } from '../html.js';
import type { SliceNode } from '../report-model.js';

const NODE_W = 230;
const NODE_H = 58;
const GAP_X = 70;
const GAP_Y = 22;
const TOP = 34;

interface Placed {
  readonly node: SliceNode;
  readonly x: number;
  readonly y: number;
}

/** Lays the slices out in columns, one per wave, in the order given. */
function place(slices: readonly SliceNode[]): Placed[] {
  const rowInWave = new Map<number, number>();
  return slices.map((node) => {
    const row = rowInWave.get(node.wave) ?? 0;
    rowInWave.set(node.wave, row + 1);
    return { node, x: 10 + node.wave * (NODE_W + GAP_X), y: TOP + row * (NODE_H + GAP_Y) };
  });
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * An arrow from a slice to one that depends on it. An arrow that skips a wave bends below the nodes (to `below`)
 * so that it never runs hidden behind the slices in between.
 */
function edge(from: Placed, to: Placed, below: number): SafeHtml {
  const x1 = from.x + NODE_W;
  const y1 = from.y + NODE_H / 2;
  const x2 = to.x - 4;
  const y2 = to.y + NODE_H / 2;
  const mid = (x1 + x2) / 2;
  const d =
    to.node.wave - from.node.wave > 1
      ? `M${String(from.x + NODE_W / 2)} ${String(from.y + NODE_H)} C${String(from.x + NODE_W / 2)} ${String(below)} ${String(to.x + NODE_W / 2)} ${String(below)} ${String(to.x + NODE_W / 2)} ${String(to.y + NODE_H + 4)}`
      : `M${String(x1)} ${String(y1)} C${String(mid)} ${String(y1)} ${String(mid)} ${String(y2)} ${String(x2)} ${String(y2)}`;
  return html`<path class="dag-edge" d="${d}" marker-end="url(#dag-arrow)"><title>${to.node.id} depends on ${from.node.id}</title></path>`;
}

function nodeMarkup(p: Placed): SafeHtml {
  const { node } = p;
  return html`<g class="dag-node state-${node.status}" data-slice="${node.id}" transform="translate(${p.x} ${p.y})">
  <title>${node.id}: ${node.status}${node.detail === null ? '' : ` — ${node.detail}`}. Constructs: ${node.constructs.join(', ')}</title>
  <rect width="${NODE_W}" height="${NODE_H}" rx="6"></rect>
  <text x="10" y="22" class="dag-id">${shorten(node.id, 30)}</text>
  <text x="10" y="44" class="dag-state">${node.status}${node.ticks > 0 ? ` · ${String(node.ticks)} tick(s)` : ''}</text>
</g>`;
}

/** The slice DAG as inline SVG (no script needed), coloured by state with the state also written in each node. */
export function renderSliceDag(slices: readonly SliceNode[]): SafeHtml {
  if (slices.length === 0)
    return html`<section id="slices" aria-labelledby="slices-h"><h2 id="slices-h">Slices</h2><p>The goal was not split into slices: the run is one loop.</p></section>`;
  const placed = place(slices);
  const byId = new Map(placed.map((p) => [p.node.id, p]));
  const waves = Math.max(...slices.map((s) => s.wave)) + 1;
  const rows = Math.max(...placed.map((p) => (p.y - TOP) / (NODE_H + GAP_Y))) + 1;
  const width = 20 + waves * NODE_W + (waves - 1) * GAP_X;
  const nodesBottom = TOP + rows * (NODE_H + GAP_Y) - GAP_Y;
  const skips = placed.some((to) =>
    to.node.dependsOn.some((dep) => to.node.wave - (byId.get(dep)?.node.wave ?? 0) > 1),
  );
  const height = nodesBottom + (skips ? 56 : GAP_Y);
  const edges = placed.flatMap((to) =>
    to.node.dependsOn.flatMap((dep) => {
      const from = byId.get(dep);
      return from === undefined ? [] : [edge(from, to, nodesBottom + 60)];
    }),
  );
  const waveLabels = Array.from(
    { length: waves },
    (_, w) => html`<text class="dag-wave" x="${10 + w * (NODE_W + GAP_X)}" y="18">wave ${w + 1}</text>`,
  );
  return html`<section id="slices" aria-labelledby="slices-h">
  <h2 id="slices-h">Slices</h2>
  <p>Each column is a wave: slices of one wave do not depend on each other. Arrows point from a slice to the slices that depend on it.</p>
  <div class="dag-wrap">
  <svg class="dag" id="slice-dag" role="img" aria-labelledby="slice-dag-title" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}">
    <title id="slice-dag-title">Slice dependency graph: ${slices.length} slice(s) in ${waves} wave(s)</title>
    <defs><marker id="dag-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0 0 L10 5 L0 10 z"></path></marker></defs>
    ${waveLabels}${edges}${placed.map(nodeMarkup)}
  </svg>
  </div>
  <table>
    <thead><tr><th scope="col">slice</th><th scope="col">wave</th><th scope="col">state</th><th scope="col">ticks</th><th scope="col">depends on</th><th scope="col">constructs</th></tr></thead>
    <tbody>${slices.map(
      (s) =>
        html`<tr><th scope="row">${s.id}</th><td>${s.wave + 1}</td><td><span class="badge state-${s.status}">${s.status}</span>${s.detail === null ? '' : html` ${s.detail}`}</td><td>${s.ticks}</td><td>${s.dependsOn.join(', ') || '–'}</td><td>${s.constructs.join(', ')}</td></tr>`,
    )}</tbody>
  </table>
</section>`;
}

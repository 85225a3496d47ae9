import type { Plan, Slice } from './plan-types.js';

function label(slice: Slice): string {
  const count = `${slice.constructs.length} construct${slice.constructs.length === 1 ? '' : 's'}`;
  return `${slice.id}<br/>${count}`.replace(/"/g, '#quot;');
}

/**
 * Renders a plan as a Mermaid flowchart: one box per slice grouped in a subgraph per wave, an arrow from each
 * slice to the slices that depend on it, condensed cycles drawn with a double border, and the integration pass
 * as the last node fed by every slice nothing else depends on. Mermaid ids are positional (`s0`, `s1`, …) so any
 * slice id is safe in a label. Ends with a newline.
 */
export function renderPlanMermaid(plan: Plan): string {
  const key = new Map(plan.slices.map((slice, index) => [slice.id, `s${index}`]));
  const lines = ['flowchart LR'];
  plan.waves.forEach((wave, index) => {
    lines.push(`  subgraph wave${index + 1}["wave ${index + 1}"]`);
    for (const id of wave) {
      const slice = plan.slices.find((candidate) => candidate.id === id)!;
      const [open, close] = slice.kind === 'cycle' ? ['[[', ']]'] : ['[', ']'];
      lines.push(`    ${key.get(id)!}${open}"${label(slice)}"${close}`);
    }
    lines.push('  end');
  });
  for (const slice of plan.slices)
    for (const dep of slice.dependsOn) lines.push(`  ${key.get(dep)!} --> ${key.get(slice.id)!}`);
  if (plan.integration !== null) {
    lines.push('  integration(["integration pass<br/>cross-entity tests + whole-spec weed"])');
    const feeding = new Set(plan.slices.flatMap((slice) => slice.dependsOn));
    for (const slice of plan.slices)
      if (!feeding.has(slice.id)) lines.push(`  ${key.get(slice.id)!} --> integration`);
  }
  return `${lines.join('\n')}\n`;
}

import type { Plan, PlanLink, Slice, SliceKind } from './plan-types.js';

const KIND_WORDS: Record<SliceKind, string> = {
  'entity-lifecycle': 'entity lifecycle',
  surface: 'surface',
  'rule-chain': 'rule chain',
  cycle: 'condensed cycle',
  bundle: 'bundle of unlinked constructs',
};

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function headline(plan: Plan): string {
  if (plan.slices.length === 0) return 'Plan: nothing to do — the goal touches no rule, entity or surface.';
  if (!plan.split) return 'Plan: one slice, no split.';
  return `Plan: ${plural(plan.slices.length, 'slice')} in ${plural(plan.waves.length, 'wave')}, then the integration pass.`;
}

function sliceLines(slice: Slice): string[] {
  const after = slice.dependsOn.length === 0 ? '' : ` — after ${slice.dependsOn.join(', ')}`;
  const lines = [
    `  ${slice.id} (${KIND_WORDS[slice.kind]}, ${plural(slice.constructs.length, 'construct')})${after}`,
  ];
  lines.push(`      ${slice.constructs.join(', ')}`);
  if (slice.cycle !== undefined) lines.push(`      cycle: ${slice.cycle.join(' → ')}`);
  if (slice.absorbed !== undefined && slice.kind !== 'bundle')
    lines.push(`      absorbed (too small alone): ${slice.absorbed.join(', ')}`);
  return lines;
}

function linkText(link: PlanLink): string {
  const through = link.through.length === 0 ? '' : ` (through ${link.through.join(', ')})`;
  const via = link.via === '' ? link.kind : `${link.kind} ${link.via}`;
  return `${link.from} → ${link.to} [${via}]${through}`;
}

function integrationLines(plan: Plan): string[] {
  if (plan.integration === null) return [];
  const crossings = plan.integration.crossings;
  const lines = [
    `Integration pass: cross-entity tests over ${plural(crossings.length, 'slice crossing')}, then a weed of the whole spec.`,
  ];
  for (const crossing of crossings) {
    lines.push(`  ${crossing.fromSlice} → ${crossing.toSlice}`);
    for (const link of crossing.links) lines.push(`      ${linkText(link)}`);
  }
  return lines;
}

/**
 * Renders a plan for a person: a headline, each wave with its slices (kind, constructs, what they wait for, the
 * cycle path of a condensed slice), the integration pass with its crossings, and the touched ids that were ignored.
 * Ends with a newline.
 */
export function renderPlanText(plan: Plan): string {
  const lines = [headline(plan)];
  plan.waves.forEach((wave, index) => {
    lines.push(
      plan.split ? `Wave ${index + 1}${wave.length > 1 ? ' (independent, may run concurrently)' : ''}` : '',
    );
    for (const id of wave) lines.push(...sliceLines(plan.slices.find((slice) => slice.id === id)!));
  });
  lines.push(...integrationLines(plan));
  if (plan.context.length > 0)
    lines.push(`Context (external or undeclared, not planned): ${plan.context.join(', ')}`);
  if (plan.ignored.length > 0) lines.push(`Not in the graph (ignored): ${plan.ignored.join(', ')}`);
  return `${lines.filter((line) => line !== '').join('\n')}\n`;
}

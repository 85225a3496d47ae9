import type { InventoryDiff } from '@allium-loop/allium';
import { compareText } from './graph-index.js';

/** The graph node an inventory id stands for: a field or variant counts as its entity; other ids are kept. */
function nodeIdOf(inventoryId: string): string {
  const id = inventoryId.replace(/#\d+$/, '');
  if (id.startsWith('field:')) return `entity:${id.slice('field:'.length).split('.')[0]!}`;
  if (id.startsWith('variant:')) return `entity:${id.slice('variant:'.length)}`;
  return id;
}

/**
 * The touched ids for {@link planSlices} from the inventory diff of the first gather tick: every added, changed
 * or removed construct, with a field (`field:Order.status`) or a variant counted as its entity (`entity:Order`).
 * Ids that name no graph node (config, invariants, questions, removed rules) pass through; `planSlices` reports
 * them as ignored. Sorted and de-duplicated.
 */
export function touchedFromDiff(diff: InventoryDiff): string[] {
  const ids = [...diff.added, ...diff.changed, ...diff.removed].map((construct) => nodeIdOf(construct.id));
  return [...new Set(ids)].sort(compareText);
}

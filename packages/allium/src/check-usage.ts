import type { BlockItem, BlockKind, Expr } from './ast.js';
import type { Diagnostic } from './diagnostic.js';
import type { SpecIndex } from './spec-index.js';
import { isPlainField, judgedFields, specFacts } from './spec-facts.js';
import { locationOf, walkItemExprs } from './walk.js';

/** True when the expression node is `name` used as a name (not a member or argument label). */
function isMention(e: Expr, name: string): boolean {
  return (e.kind === 'ident' || e.kind === 'binding' || e.kind === 'lambda') && e.name === name;
}

/** True when `name` occurs in any expression of the item or the items nested in it. */
function itemMentions(item: BlockItem, name: string): boolean {
  let found = false;
  walkItemExprs([item], (e) => {
    if (!found && isMention(e, name)) found = true;
  });
  return found;
}

/**
 * `allium.field.unused` (info): a field of an entity or external entity whose name is never accessed —
 * as a member (`x.name`), a `.created(name: …)` argument, a join key (`E{name: …}`), or, inside its own entity,
 * as a bare name in a sibling's expression — here or, as `alias/Entity.field`, in a file importing this one
 * (`readByImporters`).
 */
export function checkUnusedFields(
  index: SpecIndex,
  readByImporters: ReadonlySet<string> = new Set(),
): Diagnostic[] {
  const accessed = specFacts(index).accessedFields;
  const diagnostics: Diagnostic[] = [];
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const fields = judgedFields(index.spec.declarations[d]!, ENTITY_BLOCKS);
    const owner = fields?.owner;
    if (fields === undefined || owner === undefined) continue;
    for (let i = 0; i < fields.items.length; i += 1) {
      const item = fields.items[i]!;
      if (!isPlainField(item) || accessed.has(item.name.name) || readByImporters.has(item.name.name))
        continue;
      diagnostics.push({
        code: 'allium.field.unused',
        severity: 'info',
        message: `Field '${owner}.${item.name.name}' is declared but not referenced elsewhere.`,
        location: item.name.location,
      });
    }
  }
  return diagnostics;
}

const ENTITY_BLOCKS: ReadonlySet<BlockKind> = new Set(['entity', 'external entity']);

/**
 * `allium.externalEntity.missingSourceHint`: in a file with no `use` imports, every external entity — a warning,
 * or an info when some rule mentions it.
 */
export function checkExternalSourceHints(index: SpecIndex): Diagnostic[] {
  if (index.spec.declarations.some((d) => d.kind === 'use')) return [];
  const diagnostics: Diagnostic[] = [];
  const externals = index.entities.filter((entity) => entity.block === 'external entity');
  if (externals.length === 0) return [];
  const mentioned = new Set<string>();
  for (const rule of index.rules)
    walkItemExprs(rule.items, (e) => {
      if ((e.kind === 'ident' || e.kind === 'binding' || e.kind === 'lambda') && e.name !== undefined)
        mentioned.add(e.name);
    });
  for (const entity of externals) {
    const name = entity.name.name;
    const inRules = mentioned.has(name);
    diagnostics.push({
      code: 'allium.externalEntity.missingSourceHint',
      severity: inRules ? 'info' : 'warning',
      message: `External entity '${name}' has no obvious governing specification import in this module.`,
      location: entity.name.location,
    });
  }
  return diagnostics;
}

/**
 * `allium.surface.unusedBinding`: a surface's `context` binding (or, when the surface `provides` something, its
 * `facing` binding) that nothing else in the surface mentions. `_` is exempt.
 */
export function checkSurfaceBindings(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const surface of index.surfaces) {
    const provides = surface.items.some((item) => item.kind === 'clause' && item.keyword === 'provides');
    for (const item of surface.items) {
      if (item.kind !== 'clause' || (item.keyword !== 'facing' && item.keyword !== 'context')) continue;
      const binding = item.value;
      const name = binding.name;
      if (binding.kind !== 'binding' || name === undefined || name === '_') continue;
      if (item.keyword === 'facing' && !provides) continue;
      const used = surface.items.some((other) => {
        if (
          other.kind === 'clause' &&
          (other.keyword === 'facing' || other.keyword === 'context') &&
          other.value.kind === 'binding' &&
          other.value.name === name
        )
          return false;
        return itemMentions(other, name);
      });
      if (used) continue;
      diagnostics.push({
        code: 'allium.surface.unusedBinding',
        severity: 'warning',
        message: `Surface '${surface.name.name}' binding '${name}' is not used in the surface body.`,
        location: locationOf(index.spec, binding),
      });
    }
  }
  return diagnostics;
}

import { kidAt, kidCount, type BlockItem, type BlockKind, type Declaration, type Expr } from './ast.js';
import { perSpec, type SpecIndex } from './spec-index.js';
import { isDotMember, startsUpper, walkDeclaration } from './walk.js';

/**
 * What several structural checks need from the expressions of one file, gathered in a single walk over every
 * declaration (the checks used to walk the tree once each). Each collection states its scope; a check whose scope
 * is narrower treats the collection as a superset and filters it.
 */
export interface SpecFacts {
  /**
   * Field names accessed in blocks and top-level invariants: member names (`x.name`), `.created(name: …)`
   * arguments, join keys (`E{name: …}`), and inside an entity the bare names of its own plain fields (not a name
   * after `->`, which projects the collection's field).
   */
  readonly accessedFields: ReadonlySet<string>;
  /** List literals in blocks, top-level invariants and defaults. */
  readonly lists: readonly Expr[];
  /** Qualified names (`alias/Name`) and member accesses with a capitalised member on a plain name, anywhere. */
  readonly importedRefs: readonly Expr[];
  /** `config.x` member accesses anywhere (a superset of where the config check looks). */
  readonly configRefs: readonly Expr[];
}

/** The {@link SpecFacts} of a file, computed on first use and shared by every check of the index. */
export const specFacts = perSpec(gatherFacts);

/** What the declaration being walked contributes (the scopes stated on {@link SpecFacts}); one object, reset per declaration. */
interface Scope {
  /** Accessed field names count (blocks and top-level invariants). */
  fields: boolean;
  /** List literals count (blocks, top-level invariants and defaults). */
  lists: boolean;
  /** An entity's own plain fields: bare uses count as accesses. */
  ownFields: ReadonlySet<string> | undefined;
}

/** One walk over every declaration; the visitor does all its work inline (it runs once per node, mostly cold). */
function gatherFacts(index: SpecIndex): SpecFacts {
  const accessedFields = new Set<string>();
  const lists: Expr[] = [];
  const importedRefs: Expr[] = [];
  const configRefs: Expr[] = [];
  const scope: Scope = { fields: false, lists: false, ownFields: undefined };
  // The field names after `->` (`sections -> title`): the reference does not read one as a use of an own field.
  const projected = new Set<Expr>();
  const visit = (e: Expr): void => {
    switch (e.kind) {
      case 'member': {
        const name = e.name;
        if (name !== undefined && scope.fields) accessedFields.add(name);
        const object = e.a;
        if (object?.kind !== 'ident') return;
        if (object.name === 'config') configRefs.push(e);
        if (name !== undefined && startsUpper(name) && object.name?.includes('/') === false)
          importedRefs.push(e);
        return;
      }
      case 'ident':
        if (e.name === undefined) return;
        if (e.name.includes('/')) importedRefs.push(e);
        if (scope.ownFields?.has(e.name) === true && !projected.has(e)) accessedFields.add(e.name);
        return;
      case 'binary':
        // Visited before its operands (the walk goes parents first).
        if (e.op === '->' && e.b !== undefined && scope.ownFields !== undefined) projected.add(e.b);
        return;
      case 'call':
      case 'join':
        if (scope.fields) noteFieldKeys(e, accessedFields);
        return;
      case 'list':
        if (scope.lists) lists.push(e);
        return;
      default:
        return;
    }
  };
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    const fields = declaration.kind === 'block' || declaration.kind === 'invariant';
    scope.fields = fields;
    scope.lists = fields || declaration.kind === 'default';
    scope.ownFields = ownPlainFields(declaration);
    walkDeclaration(declaration, visit);
  }
  return { accessedFields, lists, importedRefs, configRefs };
}

/** Field names a `.created(name: …)` call's arguments or a join's keys (`E{name: …}`) access. */
function noteFieldKeys(e: Expr, accessed: Set<string>): void {
  if (e.kind === 'call' && (!isDotMember(e.a) || e.a.name !== 'created')) return;
  for (let i = 1; i < kidCount(e); i += 1) {
    const key = kidAt(e, i);
    if (key === undefined || key.name === undefined) continue;
    if (key.kind === 'arg' || (e.kind === 'join' && key.kind === 'ident')) accessed.add(key.name);
  }
}

/** A field declaration as the reference counts fields: `name: value`, with or without a `when` qualifier. */
export function isPlainField(item: BlockItem): item is Extract<BlockItem, { kind: 'field' }> {
  return item.kind === 'field' && item.params === undefined && item.path === undefined;
}

/**
 * The owner's name and the items of a declaration whose fields the checks judge: a block of one of `kinds`, or a
 * variant whose `{` starts a later line (on the base's line the reference reads `Base { … }` as a join with no
 * items: see the declaration's `joined`); otherwise undefined.
 */
export function judgedFields(
  declaration: Declaration,
  kinds: ReadonlySet<BlockKind>,
): { readonly owner: string | undefined; readonly items: readonly BlockItem[] } | undefined {
  if (declaration.kind === 'variant')
    return declaration.joined ? undefined : { owner: declaration.name.name, items: declaration.items };
  if (declaration.kind === 'block' && kinds.has(declaration.block))
    return { owner: declaration.name?.name, items: declaration.items };
  return undefined;
}

/** An entity's plain field names (bare uses of them inside the entity count as accesses). */
function ownPlainFields(declaration: Declaration): Set<string> | undefined {
  if (declaration.kind !== 'block') return undefined;
  if (declaration.block !== 'entity' && declaration.block !== 'external entity') return undefined;
  const names = new Set<string>();
  for (let i = 0; i < declaration.items.length; i += 1) {
    const item = declaration.items[i]!;
    if (isPlainField(item)) names.add(item.name.name);
  }
  return names;
}

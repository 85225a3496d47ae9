import type { BlockItem, Declaration, Expr } from './ast.js';
import type { NamedBlock, SpecIndex } from './spec-index.js';
import { triggerCalls } from './triggers.js';
import { startsUpper, walkDeclaration, walkItemExprs, walkItems } from './walk.js';

/** What the rule checks need from one rule's expressions. */
export interface RuleFacts {
  /** The names the rule binds: trigger parameters and bindings, `let`s, loop variables and lambda parameters. */
  readonly bound: ReadonlySet<string>;
  /** Member accesses on a plain name (`x.f`) in `requires`, then in `ensures`, each in walk order. */
  readonly memberRoots: readonly Expr[];
  /** Block expressions holding a `let`. */
  readonly letBlocks: readonly Expr[];
}

/**
 * What several structural checks need from the expressions of one file, gathered in a single walk over every
 * declaration (the checks used to walk the tree once each). Each collection states its scope; a check whose scope
 * is narrower treats the collection as a superset and filters it.
 */
export interface SpecFacts {
  /**
   * Field names accessed in blocks and top-level invariants: member names (`x.name`), `.created(name: …)`
   * arguments, join keys (`E{name: …}`), and inside an entity the bare names of its own plain fields.
   */
  readonly accessedFields: ReadonlySet<string>;
  /** List literals in blocks, top-level invariants and defaults. */
  readonly lists: readonly Expr[];
  /** Qualified names (`alias/Name`) and member accesses with a capitalised member on a plain name, anywhere. */
  readonly importedRefs: readonly Expr[];
  /** `config.x` member accesses anywhere. */
  readonly configRefs: readonly Expr[];
  readonly rules: ReadonlyMap<NamedBlock, RuleFacts>;
}

const memo = new WeakMap<SpecIndex, SpecFacts>();

/** The {@link SpecFacts} of a file, computed on first use and shared by every check of the index. */
export function specFacts(index: SpecIndex): SpecFacts {
  let facts = memo.get(index);
  if (facts === undefined) {
    facts = gatherFacts(index);
    memo.set(index, facts);
  }
  return facts;
}

interface Collector {
  readonly accessedFields: Set<string>;
  readonly lists: Expr[];
  readonly importedRefs: Expr[];
  readonly configRefs: Expr[];
}

function gatherFacts(index: SpecIndex): SpecFacts {
  const out: Collector = { accessedFields: new Set(), lists: [], importedRefs: [], configRefs: [] };
  const rules = new Map<NamedBlock, RuleFacts>();
  const ruleSet = new Set<Declaration>(index.rules);
  for (const declaration of index.spec.declarations) {
    if (ruleSet.has(declaration)) {
      const rule = declaration as NamedBlock;
      rules.set(rule, gatherRule(rule, out));
      continue;
    }
    const inBlock = declaration.kind === 'block' || declaration.kind === 'invariant';
    const listScope = inBlock || declaration.kind === 'default';
    const ownFields = ownPlainFields(declaration);
    walkDeclaration(declaration, (e) => {
      noteExpr(e, out, inBlock);
      if (e.kind === 'list' && listScope) out.lists.push(e);
      if (e.kind === 'ident' && e.name !== undefined && ownFields?.has(e.name) === true)
        out.accessedFields.add(e.name);
    });
  }
  return { ...out, rules };
}

/** A field declaration as the reference counts fields: `name: value`, with or without a `when` qualifier. */
export function isPlainField(item: BlockItem): item is Extract<BlockItem, { kind: 'field' }> {
  return item.kind === 'field' && item.params === undefined && item.path === undefined;
}

/** An entity's plain field names (bare uses of them inside the entity count as accesses). */
function ownPlainFields(declaration: Declaration): Set<string> | undefined {
  if (declaration.kind !== 'block') return undefined;
  if (declaration.block !== 'entity' && declaration.block !== 'external entity') return undefined;
  const names = new Set<string>();
  for (const item of declaration.items) if (isPlainField(item)) names.add(item.name.name);
  return names;
}

/** The facts every declaration contributes; `inBlock` says whether accessed field names count. */
function noteExpr(e: Expr, out: Collector, inBlock: boolean): void {
  switch (e.kind) {
    case 'member': {
      const object = e.kids[0];
      const name = e.name;
      if (name === undefined) return;
      if (inBlock) out.accessedFields.add(name);
      if (object?.kind !== 'ident' || object.name === undefined) return;
      if (object.name === 'config') out.configRefs.push(e);
      if (startsUpper(name) && !object.name.includes('/')) out.importedRefs.push(e);
      return;
    }
    case 'ident':
      if (e.name?.includes('/') === true) out.importedRefs.push(e);
      return;
    case 'call':
      if (inBlock && e.kids[0]?.kind === 'member' && e.kids[0].name === 'created') {
        for (let i = 1; i < e.kids.length; i += 1) {
          const arg = e.kids[i];
          if (arg?.kind === 'arg' && arg.name !== undefined) out.accessedFields.add(arg.name);
        }
      }
      return;
    case 'join':
      if (!inBlock) return;
      for (let i = 1; i < e.kids.length; i += 1) {
        const entry = e.kids[i];
        if ((entry?.kind === 'arg' || entry?.kind === 'ident') && entry.name !== undefined)
          out.accessedFields.add(entry.name);
      }
      return;
    default:
      return;
  }
}

function gatherRule(rule: NamedBlock, out: Collector): RuleFacts {
  const bound = new Set<string>();
  const requiresRoots: Expr[] = [];
  const ensuresRoots: Expr[] = [];
  const letBlocks: Expr[] = [];
  walkItems(rule.items, (item) => {
    if (item.kind === 'let') bound.add(item.name.name);
    else if (item.kind === 'for') for (const name of item.bindings) bound.add(name);
    else if (item.kind === 'clause' && item.keyword === 'when') {
      for (const call of triggerCalls(item.value)) {
        for (let i = 1; i < call.kids.length; i += 1) {
          const arg = call.kids[i];
          const name = arg?.kind === 'optional' ? arg.kids[0]?.name : arg?.name;
          if (name !== undefined) bound.add(name);
        }
      }
    }
  });
  walkItemExprs(rule.items, (e, item) => {
    noteExpr(e, out, true);
    switch (e.kind) {
      case 'let':
      case 'lambda':
      case 'binding':
        if (e.name !== undefined) bound.add(e.name);
        return;
      case 'for':
        if (e.name !== undefined) for (const name of e.name.split(',')) bound.add(name);
        return;
      case 'block':
        if (e.kids.some((kid) => kid.kind === 'let')) letBlocks.push(e);
        return;
      case 'list':
        out.lists.push(e);
        return;
      case 'member':
        if (e.kids[0]?.kind !== 'ident' || item.kind !== 'clause') return;
        if (item.keyword === 'requires') requiresRoots.push(e);
        else if (item.keyword === 'ensures') ensuresRoots.push(e);
        return;
      default:
        return;
    }
  });
  return { bound, memberRoots: requiresRoots.concat(ensuresRoots), letBlocks };
}

import type { BlockItem, BlockKind, Declaration, Ident, ParsedSpec } from './ast.js';
import { walkItems } from './walk.js';

/** A braced declaration with a name. */
export type NamedBlock = Extract<Declaration, { kind: 'block' }> & { readonly name: Ident };

/** Type names every spec may use without declaring them. */
export const BUILTIN_TYPES = new Set([
  'String',
  'Integer',
  'Decimal',
  'Boolean',
  'Timestamp',
  'Duration',
  'List',
  'Set',
  'Map',
  'Any',
  'Void',
]);

/** Lookup tables over one parsed file, built once and shared by the checks. */
export interface SpecIndex {
  readonly spec: ParsedSpec;
  readonly blocks: readonly NamedBlock[];
  readonly entities: readonly NamedBlock[];
  readonly rules: readonly NamedBlock[];
  readonly surfaces: readonly NamedBlock[];
  /** Entity (internal and external) and variant names. */
  readonly entityNames: ReadonlySet<string>;
  /** Every declared type name plus built-ins and `use` aliases. */
  readonly typeNames: ReadonlySet<string>;
  /**
   * Names a rule may use without binding them: `given` and `default` names. A declared name is not one (the
   * reference's `undefinedBinding` judges `user.f` under `entity user`, a `use` alias's `core.f`, a rule's own name).
   */
  readonly globalNames: ReadonlySet<string>;
}

/**
 * `compute`, once per file: the first call for an index computes it, later calls answer what that one did, for as
 * long as the index lives. For what several checks, or every file importing this one, read of a file.
 */
export function perSpec<T extends object>(compute: (index: SpecIndex) => T): (index: SpecIndex) => T {
  const computed = new WeakMap<SpecIndex, T>();
  return (index) => {
    let value = computed.get(index);
    if (value === undefined) {
      value = compute(index);
      computed.set(index, value);
    }
    return value;
  };
}

/** Builds the {@link SpecIndex} of a parsed file. */
export function indexSpec(spec: ParsedSpec): SpecIndex {
  const blocks = spec.declarations.filter((d): d is NamedBlock => d.kind === 'block' && d.name !== undefined);
  const ofKind = (...kinds: BlockKind[]): NamedBlock[] => blocks.filter((b) => kinds.includes(b.block));
  const entities = ofKind('entity', 'external entity');
  const variants = spec.declarations.flatMap((d) => (d.kind === 'variant' ? [d.name.name] : []));
  const entityNames = new Set([...entities.map((e) => e.name.name), ...variants]);
  const typeNames = new Set([
    ...BUILTIN_TYPES,
    ...entityNames,
    ...ofKind('value', 'enum', 'actor').map((b) => b.name.name),
    ...spec.declarations.flatMap((d) => (d.kind === 'use' && d.alias !== undefined ? [d.alias.name] : [])),
  ]);
  return {
    spec,
    blocks,
    entities,
    rules: ofKind('rule'),
    surfaces: ofKind('surface'),
    entityNames,
    typeNames,
    globalNames: collectGlobalNames(spec),
  };
}

function collectGlobalNames(spec: ParsedSpec): Set<string> {
  const names = new Set<string>();
  for (const declaration of spec.declarations) {
    if (declaration.kind === 'default') names.add(declaration.name.name);
    if (declaration.kind === 'block' && declaration.block === 'given') {
      for (const item of declaration.items) if (item.kind === 'field') names.add(item.name.name);
    }
  }
  return names;
}

type Clause = Extract<BlockItem, { kind: 'clause' }>;

/**
 * Each item list's clauses grouped by keyword, as `[keyword, clauses, keyword, clauses, …]`: a block has a few
 * keywords, and a flat list of exactly sized lists is smaller than a map of grown lists (1.1 MB against 1.5 MB at
 * 50k lines), while a search of a few entries costs what a map lookup does.
 */
const clauseGroups = new WeakMap<readonly BlockItem[], readonly (string | readonly Clause[])[]>();
const NO_CLAUSES: readonly Clause[] = [];
const NO_GROUPS: readonly (string | readonly Clause[])[] = [];

/**
 * The clauses of a block with this keyword, including those nested in block-level `for`/`if`, in source order.
 * The item list is grouped by keyword once and the grouping kept while the list lives (many checks ask per rule).
 */
export function clausesOf(items: readonly BlockItem[], keyword: string): readonly Clause[] {
  let groups = clauseGroups.get(items);
  if (groups === undefined) {
    groups = groupClauses(items);
    clauseGroups.set(items, groups);
  }
  for (let i = 0; i < groups.length; i += 2)
    if (groups[i] === keyword) return groups[i + 1] as readonly Clause[];
  return NO_CLAUSES;
}

function groupClauses(items: readonly BlockItem[]): readonly (string | readonly Clause[])[] {
  const groups: (string | Clause[])[] = [];
  walkItems(items, (item) => {
    if (item.kind !== 'clause') return;
    for (let i = 0; i < groups.length; i += 2)
      if (groups[i] === item.keyword) {
        (groups[i + 1] as Clause[]).push(item);
        return;
      }
    groups.push(item.keyword, [item]);
  });
  if (groups.length === 0) return NO_GROUPS;
  // A list pushed to keeps room for more (see `exact`): what stays is copied to its length.
  for (let i = 1; i < groups.length; i += 2) {
    const group = groups[i] as Clause[];
    if (group.length > 1) groups[i] = group.slice();
  }
  return groups.slice();
}

import type { BlockItem, BlockKind, Declaration, Ident, ParsedSpec } from './ast.js';

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
  /** Names a rule may use without binding them: declarations, `given` and `default` names, config. */
  readonly globalNames: ReadonlySet<string>;
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
    globalNames: collectGlobalNames(spec, blocks, typeNames),
  };
}

function collectGlobalNames(
  spec: ParsedSpec,
  blocks: readonly NamedBlock[],
  typeNames: ReadonlySet<string>,
): Set<string> {
  const names = new Set<string>([...typeNames, 'config', 'this', 'now']);
  for (const block of blocks) names.add(block.name.name);
  for (const declaration of spec.declarations) {
    if (declaration.kind === 'default') names.add(declaration.name.name);
    if (declaration.kind === 'block' && declaration.block === 'given') {
      for (const item of declaration.items) if (item.kind === 'field') names.add(item.name.name);
    }
  }
  return names;
}

/** The clauses of a block with this keyword, including those nested in block-level `for`/`if`. */
export function clausesOf(
  items: readonly BlockItem[],
  keyword: string,
): Extract<BlockItem, { kind: 'clause' }>[] {
  const found: Extract<BlockItem, { kind: 'clause' }>[] = [];
  const visit = (list: readonly BlockItem[]): void => {
    for (const item of list) {
      if (item.kind === 'clause' && item.keyword === keyword) found.push(item);
      if (item.kind === 'for') visit(item.items);
      if (item.kind === 'if') {
        for (const branch of item.branches) visit(branch.items);
        visit(item.elseItems ?? []);
      }
    }
  };
  visit(items);
  return found;
}

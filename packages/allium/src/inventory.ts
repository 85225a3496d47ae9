import { compareStrings } from './walk.js';
import type { BlockItem, Declaration, ParsedSpec, Suppression } from './ast.js';
import type { SourceLocation } from './diagnostic.js';

/** What an inventory entry is. */
export type ConstructKind =
  | 'rule'
  | 'entity'
  | 'field'
  | 'surface'
  | 'config'
  | 'suppression'
  | 'value'
  | 'enum'
  | 'variant'
  | 'actor'
  | 'invariant'
  | 'question';

/**
 * One construct of a spec set. `id` is stable across edits that do not rename it (`rule:Name`, `entity:Name`,
 * `field:Entity.name`, `surface:S`, `config:key`, `suppression:<file>:<construct>:<codes>`); `fingerprint` changes
 * when its text changes (whitespace and comments aside).
 */
export interface Construct {
  readonly id: string;
  readonly kind: ConstructKind;
  readonly name: string;
  readonly location: SourceLocation;
  readonly fingerprint: string;
}

/** Every construct of a spec set, sorted by id. */
export interface Inventory {
  readonly constructs: readonly Construct[];
}

/** What changed between two inventories. `changed` holds the new version of constructs whose text changed. */
export interface InventoryDiff {
  readonly added: readonly Construct[];
  readonly removed: readonly Construct[];
  readonly changed: readonly Construct[];
}

/** Builds the construct inventory of parsed specs. */
export function buildInventory(specs: readonly ParsedSpec[]): Inventory {
  const byId = new Map<string, Construct>();
  const add = (construct: Construct): void => {
    let id = construct.id;
    for (let n = 2; byId.has(id); n += 1) id = `${construct.id}#${n}`;
    byId.set(id, { ...construct, id });
  };
  for (const spec of specs) {
    const lines = spec.source.split('\n');
    const own: Construct[] = [];
    for (const declaration of spec.declarations) own.push(...declarationConstructs(declaration, lines));
    own.forEach(add);
    for (const suppression of spec.suppressions) add(suppressionConstruct(spec.file, suppression, own));
  }
  return { constructs: [...byId.values()].sort((a, b) => compareStrings(a.id, b.id)) };
}

/** Compares two inventories by construct id. */
export function diffInventory(before: Inventory, after: Inventory): InventoryDiff {
  const old = new Map(before.constructs.map((c) => [c.id, c]));
  const now = new Map(after.constructs.map((c) => [c.id, c]));
  return {
    added: after.constructs.filter((c) => !old.has(c.id)),
    removed: before.constructs.filter((c) => !now.has(c.id)),
    changed: after.constructs.filter((c) => {
      const previous = old.get(c.id);
      return previous !== undefined && previous.fingerprint !== c.fingerprint;
    }),
  };
}

const BLOCK_KINDS: Readonly<Record<string, ConstructKind | undefined>> = {
  entity: 'entity',
  'external entity': 'entity',
  value: 'value',
  enum: 'enum',
  rule: 'rule',
  surface: 'surface',
  actor: 'actor',
};

function declarationConstructs(declaration: Declaration, lines: readonly string[]): Construct[] {
  const text = (from: number, to: number): string => fingerprint(lines.slice(from - 1, to).join('\n'));
  const loc = declaration.location;
  switch (declaration.kind) {
    case 'block': {
      if (declaration.block === 'config')
        return configConstructs(declaration.items, declaration.qualifier, lines);
      const kind = BLOCK_KINDS[declaration.block];
      const name = declaration.name?.name;
      if (kind === undefined || name === undefined) return [];
      const self = {
        id: `${kind}:${name}`,
        kind,
        name,
        location: loc,
        fingerprint: text(loc.line, declaration.endLine),
      };
      const withFields = kind === 'entity' || kind === 'value';
      return [self, ...(withFields ? fieldConstructs(name, declaration.items, lines) : [])];
    }
    case 'variant': {
      const name = declaration.name.name;
      const self = {
        id: `variant:${name}`,
        kind: 'variant' as const,
        name,
        location: loc,
        fingerprint: text(loc.line, declaration.endLine),
      };
      return [self, ...fieldConstructs(name, declaration.items, lines)];
    }
    case 'invariant':
      return [
        {
          id: `invariant:${declaration.name.name}`,
          kind: 'invariant',
          name: declaration.name.name,
          location: loc,
          fingerprint: text(loc.line, loc.line),
        },
      ];
    case 'open-question':
      return [
        {
          id: `question:${declaration.text}`,
          kind: 'question',
          name: declaration.text,
          location: loc,
          fingerprint: fingerprint(declaration.text),
        },
      ];
    default:
      return [];
  }
}

function fieldConstructs(owner: string, items: readonly BlockItem[], lines: readonly string[]): Construct[] {
  return items.flatMap((item) => {
    if (item.kind !== 'field') return [];
    const name = `${owner}.${item.name.name}`;
    const line = lines[item.name.location.line - 1] ?? '';
    return [
      {
        id: `field:${name}`,
        kind: 'field' as const,
        name,
        location: item.name.location,
        fingerprint: fingerprint(line),
      },
    ];
  });
}

function configConstructs(
  items: readonly BlockItem[],
  qualifier: string | undefined,
  lines: readonly string[],
): Construct[] {
  return items.flatMap((item) => {
    if (item.kind !== 'field') return [];
    const name = qualifier === undefined ? item.name.name : `${qualifier}/${item.name.name}`;
    const line = lines[item.name.location.line - 1] ?? '';
    return [
      {
        id: `config:${name}`,
        kind: 'config' as const,
        name,
        location: item.name.location,
        fingerprint: fingerprint(line),
      },
    ];
  });
}

/** A suppression is named after the construct it sits on or just above, so moving lines does not rename it. */
function suppressionConstruct(
  file: string,
  suppression: Suppression,
  constructs: readonly Construct[],
): Construct {
  const line = suppression.location.line;
  const target =
    constructs.find((c) => c.location.line === line) ??
    constructs.find((c) => c.location.line === line + 1) ??
    [...constructs].reverse().find((c) => c.location.line < line && c.kind !== 'field');
  const codes = [...suppression.codes].sort().join(',');
  const anchor = target?.id ?? `line:${line}`;
  return {
    id: `suppression:${file}:${anchor}:${codes}`,
    kind: 'suppression',
    name: codes,
    location: suppression.location,
    fingerprint: fingerprint(codes),
  };
}

/** FNV-1a over the text with comments dropped and whitespace collapsed, as 8 hex digits. */
export function fingerprint(text: string): string {
  const normalised = text
    .split('\n')
    .map((line) => line.replace(/--.*$/, '').trim())
    .filter((line) => line !== '')
    .join(' ')
    .replace(/\s+/g, ' ');
  let hash = 0x811c9dc5;
  for (let i = 0; i < normalised.length; i += 1) {
    hash ^= normalised.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

import { forEachKid, kidsOf, type Expr, type Ident } from './ast.js';
import { type CheckSet, resolveUsePath } from './check-declarations.js';
import { specFacts } from './spec-facts.js';
import type { SpecIndex } from './spec-index.js';
import { collectCallNames, ifBodies, reachableTriggers, type TriggerRef, triggerRefs } from './triggers.js';
import { forEachItemExpr, isDotMember, startsUpper, walkExpr, walkItems } from './walk.js';
import { type Witnessed, witnessTransitions } from './witnessed-transitions.js';

/**
 * What one file of a check set imports from the others, as the reference's multi-file context has it: each
 * `use "…" as alias` whose path names a file of the check set (relative to the importing file, exactly), by alias.
 * An alias whose file is not in the check set is absent: what it offers is unknowable, so nothing is judged by it.
 */
export type Imports = ReadonlyMap<string, SpecIndex>;

/** A file that imports nothing from its check set (a check of one file alone). */
export const NO_IMPORTS: Imports = new Map();

/**
 * Whether a trigger a rule of `index` listens for is reachable in its check set, as the reference judges it for the
 * `allium.rule.unreachableTrigger` diagnostic and the `unreachable_trigger` finding alike: a plain `T` when the file's
 * surfaces provide it or its rules emit it, an importer provides it as `alias/T(…)`, or any imported file offers it;
 * a qualified `alias/T` when the file `alias` names offers `T`, and `undefined` (not judged) when that file is not in
 * the check set.
 */
export function triggerReachability(
  index: SpecIndex,
  imports: Imports,
  providedByImporters: ReadonlySet<string>,
): (ref: TriggerRef) => boolean | undefined {
  const local = reachableTriggers(index);
  return (ref) => {
    if (ref.qualified) {
      const slash = ref.name.indexOf('/');
      const target = imports.get(ref.name.slice(0, slash));
      return target === undefined ? undefined : reachableTriggers(target).has(ref.name.slice(slash + 1));
    }
    if (local.has(ref.name) || providedByImporters.has(ref.name)) return true;
    for (const target of imports.values()) if (reachableTriggers(target).has(ref.name)) return true;
    return false;
  };
}

/** The {@link Imports} of `index` within its check set. */
export function resolveImports(index: SpecIndex, checkSet: CheckSet): Imports {
  const imports = new Map<string, SpecIndex>();
  for (const declaration of index.spec.declarations) {
    if (declaration.kind !== 'use' || declaration.alias === undefined) continue;
    const target = resolveUsePath(index, declaration.path, checkSet);
    if (target !== undefined) imports.set(declaration.alias.name, target);
  }
  return imports;
}

/**
 * Whether `importer` refers to `name`, a declaration of `target`, which it imports under `aliases` (its
 * {@link ImportedBy} entry): as `alias/Name` or `alias.Name` through one of them, or by the bare name when the importer
 * does not declare it itself (the reference's external references, which make an imported declaration used).
 */
export function importerUses(
  importer: SpecIndex,
  aliases: readonly string[],
  target: SpecIndex,
  name: string,
): boolean {
  if (importer === target || aliases.length === 0) return false;
  for (const alias of aliases) if (qualifiedNames(importer).has(`${alias}/${name}`)) return true;
  return !declaredNames(importer).has(name) && (importer.spec.nameCounts.get(name) ?? 0) > 0;
}

/** The files of a check set that import one file, each with the aliases under which it does, in the order of the set. */
export type ImportedBy = readonly { readonly importer: SpecIndex; readonly aliases: readonly string[] }[];

/**
 * Every file's {@link ImportedBy}, from each file's {@link Imports} (in the order of `imports`, and of each file's
 * aliases), in one pass: so what a file's importers give it costs what they import from it, not what the whole
 * check set imports (a folder of 3,000 files, each importing the next, took 7.7 s when every file was asked about
 * every other; tools/bench/spec/README.md).
 */
export function importersOf(imports: ReadonlyMap<SpecIndex, Imports>): ReadonlyMap<SpecIndex, ImportedBy> {
  const byTarget = new Map<SpecIndex, { importer: SpecIndex; aliases: string[] }[]>();
  for (const [importer, aliases] of imports) {
    for (const [alias, target] of aliases) {
      let importers = byTarget.get(target);
      if (importers === undefined) {
        importers = [];
        byTarget.set(target, importers);
      }
      const last = importers[importers.length - 1];
      if (last?.importer === importer) last.aliases.push(alias);
      else importers.push({ importer, aliases: [alias] });
    }
  }
  return byTarget;
}

/** The kinds of declaration another file can refer to by name (the reference's declared names). */
const IMPORTABLE = new Set(['entity', 'external entity', 'value', 'enum', 'actor', 'contract']);

const declaredCache = new WeakMap<SpecIndex, ReadonlySet<string>>();

/** The names of the entities, values, enums, actors, contracts and variants a file declares. */
export function declaredNames(index: SpecIndex): ReadonlySet<string> {
  let names = declaredCache.get(index);
  if (names !== undefined) return names;
  const found = new Set<string>();
  for (const declaration of index.spec.declarations) {
    if (declaration.kind === 'variant') found.add(declaration.name.name);
    else if (
      declaration.kind === 'block' &&
      declaration.name !== undefined &&
      IMPORTABLE.has(declaration.block)
    )
      found.add(declaration.name.name);
  }
  names = found;
  declaredCache.set(index, names);
  return names;
}

const qualifiedCache = new WeakMap<SpecIndex, ReadonlySet<string>>();

/**
 * Every `alias/Name` a file refers to (`alias.Name` spelled the same way), its `default alias/Type`s, variant bases
 * and deferred paths included.
 */
function qualifiedNames(index: SpecIndex): ReadonlySet<string> {
  let names = qualifiedCache.get(index);
  if (names !== undefined) return names;
  const found = new Set<string>();
  for (const ref of specFacts(index).importedRefs) {
    const object = ref.a;
    if (ref.kind === 'member') found.add(`${object?.name ?? ''}/${ref.name ?? ''}`);
    else if (ref.name !== undefined) found.add(ref.name);
  }
  for (const type of qualifiedDeclarationTypes(index)) found.add(type.name);
  names = found;
  qualifiedCache.set(index, names);
  return names;
}

/**
 * The qualified names that sit on a declaration rather than in an expression: a `default alias/Type`'s type, a
 * `variant V : alias/Base`'s base (plain or a join) and a `deferred` path's qualified reference (`alias/Name`, or
 * `X.Name` read as `X/Name`: `member`).
 */
export function qualifiedDeclarationTypes(index: SpecIndex): (Ident & { readonly member?: boolean })[] {
  const found: (Ident & { readonly member?: boolean })[] = [];
  for (const declaration of index.spec.declarations) {
    const type =
      declaration.kind === 'default'
        ? declaration.type
        : declaration.kind === 'variant'
          ? declaration.base
          : declaration.kind === 'deferred'
            ? declaration.qualified
            : undefined;
    if (type?.name.includes('/') === true) found.push(type);
  }
  return found;
}

const offeredCache = new WeakMap<SpecIndex, ReadonlySet<string>>();

/**
 * The names a file offers to the files importing it, against which their `alias/Name` references are judged: the
 * triggers its surfaces provide and its rules emit or listen for, and the types it declares.
 */
export function offeredNames(index: SpecIndex): ReadonlySet<string> {
  let names = offeredCache.get(index);
  if (names !== undefined) return names;
  const found = new Set<string>([...reachableTriggers(index), ...declaredNames(index)]);
  for (const rule of index.rules)
    for (const item of rule.items)
      if (item.kind === 'clause' && item.keyword === 'when')
        for (const ref of triggerRefs(item.value)) found.add(ref.name.slice(ref.name.lastIndexOf('/') + 1));
  names = found;
  offeredCache.set(index, names);
  return names;
}

/**
 * The qualified names (`alias/Things`) in a collection's place: what `for … in` and `in` iterate, the source of
 * `where`/`with`, a block-level `let`'s value. Such a name is an imported entity's plural, which no offered set holds,
 * so the reference leaves it unjudged.
 */
export function collectionHeads(index: SpecIndex): ReadonlySet<Expr> {
  const heads = new Set<Expr>();
  const mark = (expr: Expr | undefined): void => {
    if (expr === undefined) return;
    if (expr.kind === 'ident' && expr.name?.includes('/') === true) heads.add(expr);
    else if (expr.kind === 'binary' && (expr.op === 'where' || expr.op === 'with')) mark(expr.a);
  };
  const visit = (expr: Expr): void => {
    if (expr.kind === 'binary' && (expr.op === 'in' || expr.op === 'not in')) mark(expr.b);
    else if (expr.kind === 'binary' && (expr.op === 'where' || expr.op === 'with')) mark(expr.a);
    else if (expr.kind === 'for') mark(expr.a);
  };
  for (const declaration of index.spec.declarations) {
    if (declaration.kind === 'invariant') walkExpr(declaration.body, visit);
    else if (declaration.kind === 'default') walkExpr(declaration.value, visit);
    else if (declaration.kind === 'block' || declaration.kind === 'variant')
      walkItems(declaration.items, (item) => {
        if (item.kind === 'for') mark(item.collection);
        if (item.kind === 'let') mark(item.value);
        forEachItemExpr(item, (expr) => walkExpr(expr, visit));
      });
  }
  return heads;
}

/** What the files importing a file contribute to its own checks (the reference's reverse contributions, in part). */
export interface Contributions {
  /** Triggers an importer's surface provides as `alias/Trigger(…)`: the imported file's listeners are reachable. */
  readonly providedTriggers: ReadonlySet<string>;
  /** Fields an importer reads as `alias/Entity.field`: used, though the use lives in another file. */
  readonly referencedFields: ReadonlySet<string>;
  /**
   * Entity → the `status` values an importer's rules create it with (`alias/Entity.created(status: v)`) or set on a
   * binding typed to it (see {@link witnessTransitions}).
   */
  readonly assignedStatuses: ReadonlyMap<string, ReadonlySet<string>>;
  /** Entity → `from` → the `to` states of the transitions an importer's rules witness on it. */
  readonly witnessedTransitions: ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;
}

/** A file nobody imports. */
export const NO_CONTRIBUTIONS: Contributions = {
  providedTriggers: new Set(),
  referencedFields: new Set(),
  assignedStatuses: new Map(),
  witnessedTransitions: new Map(),
};

/** What a file's check set gives its checks and findings: the files it imports, and what its importers contribute. */
export interface CheckSetContext {
  readonly imports: Imports;
  readonly contributions: Contributions;
}

/** A file checked alone. */
export const ALONE: CheckSetContext = { imports: NO_IMPORTS, contributions: NO_CONTRIBUTIONS };

/** The {@link Contributions} the files of a check set make to `target`, given the files that import it. */
export function contributionsTo(target: SpecIndex, importedBy: ImportedBy): Contributions {
  const providedTriggers = new Set<string>();
  const referencedFields = new Set<string>();
  const witnessed: Witnessed = { assigned: new Map(), transitions: new Map() };
  for (const { importer, aliases } of importedBy) {
    for (const alias of aliases) {
      for (const surface of importer.surfaces)
        for (const item of surface.items)
          if (item.kind === 'clause' && item.keyword === 'provides')
            collectCallNames(item.value, providedTriggers, (callee) =>
              callee.startsWith(`${alias}/`) && startsUpper(callee, alias.length + 1)
                ? callee.slice(alias.length + 1)
                : undefined,
            );
      for (const rule of importer.rules)
        walkItems(rule.items, (item) => {
          if (item.kind === 'clause' && item.keyword === 'ensures')
            qualifiedCreations(item.value, alias, witnessed.assigned);
        });
      witnessTransitions(importer, alias, target, witnessed);
      for (const declaration of importer.spec.declarations) {
        if (declaration.kind !== 'block') continue;
        walkItems(declaration.items, (item) =>
          forEachItemExpr(item, (expr) =>
            walkExpr(expr, (e) => {
              const object = e.a;
              if (
                e.kind === 'member' &&
                object?.kind === 'ident' &&
                object.name?.startsWith(`${alias}/`) === true
              )
                referencedFields.add(e.name ?? '');
            }),
          ),
        );
      }
    }
  }
  const { assigned: assignedStatuses, transitions: witnessedTransitions } = witnessed;
  return providedTriggers.size === 0 && referencedFields.size === 0 && assignedStatuses.size === 0
    ? NO_CONTRIBUTIONS
    : { providedTriggers, referencedFields, assignedStatuses, witnessedTransitions };
}

/** `alias/Entity.created(status: v)` calls of an `ensures` value (through blocks and `if` bodies): entity → values. */
function qualifiedCreations(expr: Expr, alias: string, out: Map<string, Set<string>>): void {
  if (expr.kind === 'call') {
    const callee = expr.a;
    const entity = isDotMember(callee) && callee.name === 'created' ? callee.a : undefined;
    if (entity?.kind !== 'ident' || entity.name?.startsWith(`${alias}/`) !== true) return;
    for (const arg of kidsOf(expr).slice(1)) {
      const value = arg.kind === 'arg' && arg.name === 'status' ? arg.a : undefined;
      if (value?.kind !== 'ident' || value.name === undefined) continue;
      const name = entity.name.slice(alias.length + 1);
      const statuses = out.get(name) ?? new Set<string>();
      statuses.add(value.name);
      out.set(name, statuses);
    }
  } else if (expr.kind === 'block') forEachKid(expr, (kid) => qualifiedCreations(kid, alias, out));
  else if (expr.kind === 'if') for (const body of ifBodies(expr)) qualifiedCreations(body, alias, out);
}

/**
 * The names that more than one imported file holds (by `held`: the names it declares, or the triggers it offers),
 * each with the aliases naming those files: per file its alphabetically first alias, sorted. Two aliases of one file
 * are no ambiguity.
 */
export function ambiguousImports(
  imports: Imports,
  held: (target: SpecIndex) => ReadonlySet<string>,
): ReadonlyMap<string, readonly string[]> {
  const sources = new Map<string, Map<SpecIndex, string>>();
  for (const [alias, target] of imports)
    for (const name of held(target)) {
      const byTarget = sources.get(name) ?? new Map<SpecIndex, string>();
      const known = byTarget.get(target);
      if (known === undefined || alias < known) byTarget.set(target, alias);
      sources.set(name, byTarget);
    }
  const ambiguous = new Map<string, readonly string[]>();
  for (const [name, byTarget] of sources)
    if (byTarget.size >= 2) ambiguous.set(name, [...byTarget.values()].sort());
  return ambiguous;
}

/** `'a' and 'b'`, `'a', 'b' and 'c'`: aliases as the reference lists them. */
export function aliasList(aliases: readonly string[]): string {
  const quoted = aliases.map((alias) => `'${alias}'`);
  return quoted.length < 2 ? quoted.join(', ') : `${quoted.slice(0, -1).join(', ')} and ${quoted.at(-1)}`;
}

import { forEachKid, kidsOf, type Expr, type Ident } from './ast.js';
import { type CheckSet, resolveUsePath } from './check-declarations.js';
import { specFacts } from './spec-facts.js';
import { perSpec, type SpecIndex } from './spec-index.js';
import { addTo, append } from './status-lookup.js';
import {
  forEachProvidedName,
  ifBodies,
  reachableTriggers,
  type TriggerRef,
  triggerRefs,
} from './triggers.js';
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
  // What any imported file offers, gathered once: a file importing thousands and listening for thousands of plain
  // triggers would otherwise ask every imported file about each.
  let imported: Set<string> | undefined;
  return (ref) => {
    if (ref.qualified) {
      const slash = ref.name.indexOf('/');
      const target = imports.get(ref.name.slice(0, slash));
      return target === undefined ? undefined : reachableTriggers(target).has(ref.name.slice(slash + 1));
    }
    if (local.has(ref.name) || providedByImporters.has(ref.name)) return true;
    if (imported === undefined) {
      imported = new Set();
      for (const target of imports.values()) for (const name of reachableTriggers(target)) imported.add(name);
    }
    return imported.has(ref.name);
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
 * Whether a file importing `target` (one of `importedBy`, other than `target` itself) refers to a name `target`
 * declares: as `alias/Name` or `alias.Name` through an alias it imports `target` under, or by the bare name when the
 * importer does not declare it itself (the reference's external references, which make an imported declaration used).
 * Asking about every name of a file that thousands of files import costs what those files hold, once, not the names
 * times the files: a bare name is looked for in each importer until that has cost as much as gathering every bare name
 * of them all, and then in what was gathered.
 */
export function usedByImporters(target: SpecIndex, importedBy: ImportedBy): (name: string) => boolean {
  const importers = importedBy.filter(({ importer, aliases }) => importer !== target && aliases.length > 0);
  if (importers.length === 0) return () => false;
  // A name not capitalised is used only in a type slot, in an importer as in its own file (namesInTypeSlots).
  const usesBare = (importer: SpecIndex, name: string): boolean =>
    !declaredNames(importer).has(name) &&
    ((startsUpper(name) ? importer.spec.nameCounts : namesInTypeSlots(importer)).get(name) ?? 0) > 0;
  let qualified: Set<string> | undefined;
  let bare: Set<string> | undefined;
  let looked = 0;
  const everyName = importers.reduce((sum, { importer }) => sum + importer.spec.nameCounts.size, 0);
  return (name) => {
    if (qualified === undefined) {
      qualified = new Set();
      for (const { importer, aliases } of importers)
        for (const alias of aliases)
          for (const used of qualifiedByAlias(importer).get(alias) ?? []) qualified.add(used);
    }
    if (qualified.has(name)) return true;
    if (bare !== undefined) return bare.has(name);
    looked += importers.length;
    if (looked <= everyName) return importers.some(({ importer }) => usesBare(importer, name));
    bare = new Set();
    for (const { importer } of importers) {
      for (const used of importer.spec.nameCounts.keys()) if (usesBare(importer, used)) bare.add(used);
      for (const used of namesInTypeSlots(importer).keys()) if (usesBare(importer, used)) bare.add(used);
    }
    return bare.has(name);
  };
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

/**
 * How often each name is a variant's plain base (not a join) or a default's type. The reference reads only
 * capitalised names in expressions as uses of a declaration, but takes any name in those two places: so a declaration
 * whose name is not capitalised (`entity user`) is used only there, in its own file or by a file importing it, however
 * often `user` appears in either.
 */
export const namesInTypeSlots = perSpec((index): ReadonlyMap<string, number> => {
  const counts = new Map<string, number>();
  const count = (name: string | undefined): void => {
    if (name !== undefined) counts.set(name, (counts.get(name) ?? 0) + 1);
  };
  for (const declaration of index.spec.declarations) {
    if (declaration.kind === 'variant' && !declaration.baseIsJoin) count(declaration.base?.name);
    else if (declaration.kind === 'default') count(declaration.type?.name);
  }
  return counts;
});

/** The kinds of declaration another file can refer to by name (the reference's declared names). */
const IMPORTABLE = new Set(['entity', 'external entity', 'value', 'enum', 'actor', 'contract']);

/** The names of the entities, values, enums, actors, contracts and variants a file declares. */
export const declaredNames = perSpec((index): ReadonlySet<string> => {
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
  return found;
});

/**
 * Every `alias/Name` a file refers to (`alias.Name` spelled the same way), its `default alias/Type`s, variant bases
 * and deferred paths included: alias → the names after it.
 */
const qualifiedByAlias = perSpec((index): ReadonlyMap<string, ReadonlySet<string>> => {
  const found = new Map<string, Set<string>>();
  const add = (qualified: string): void => {
    const slash = qualified.indexOf('/');
    if (slash >= 0) addTo(found, qualified.slice(0, slash), qualified.slice(slash + 1));
  };
  for (const ref of specFacts(index).importedRefs) {
    const object = ref.a;
    if (ref.kind === 'member') add(`${object?.name ?? ''}/${ref.name ?? ''}`);
    else if (ref.name !== undefined) add(ref.name);
  }
  for (const type of qualifiedDeclarationTypes(index)) add(type.name);
  return found;
});

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

/**
 * The names a file offers to the files importing it, against which their `alias/Name` references are judged: the
 * triggers its surfaces provide and its rules emit or listen for, and the types it declares.
 */
export const offeredNames = perSpec((index): ReadonlySet<string> => {
  const found = new Set<string>([...reachableTriggers(index), ...declaredNames(index)]);
  for (const rule of index.rules)
    for (const item of rule.items)
      if (item.kind === 'clause' && item.keyword === 'when')
        for (const ref of triggerRefs(item.value)) found.add(ref.name.slice(ref.name.lastIndexOf('/') + 1));
  return found;
});

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
    const through = qualifiedUses(importer);
    for (const alias of aliases) {
      for (const name of through.provided.get(alias) ?? []) providedTriggers.add(name);
      for (const [entity, status] of through.created.get(alias) ?? [])
        addTo(witnessed.assigned, entity, status);
      witnessTransitions(importer, alias, target, witnessed);
      for (const field of through.fields.get(alias) ?? []) referencedFields.add(field);
    }
  }
  const { assigned: assignedStatuses, transitions: witnessedTransitions } = witnessed;
  return providedTriggers.size === 0 && referencedFields.size === 0 && assignedStatuses.size === 0
    ? NO_CONTRIBUTIONS
    : { providedTriggers, referencedFields, assignedStatuses, witnessedTransitions };
}

/**
 * What a file does with the names it imports, by the alias it names them through (each list in the order the file
 * has them): the triggers its surfaces provide as `alias/Trigger(…)`, the `(Entity, status)` pairs of its rules'
 * `alias/Entity.created(status: v)`, and the fields its declarations read as `alias/Entity.field`. Gathered in one
 * walk of the file, so a file importing thousands of others under as many aliases is walked once, not once per alias
 * (a file of 2,000 aliases, rules and surfaces took 3.9 s against the reference's 0.8 s when it was walked per alias;
 * tools/bench/spec/README.md).
 */
interface QualifiedUses {
  readonly provided: ReadonlyMap<string, readonly string[]>;
  readonly created: ReadonlyMap<string, readonly (readonly [string, string])[]>;
  readonly fields: ReadonlyMap<string, readonly string[]>;
}

const qualifiedUses = perSpec((importer): QualifiedUses => {
  const provided = new Map<string, string[]>();
  const created = new Map<string, [string, string][]>();
  const fields = new Map<string, string[]>();
  for (const surface of importer.surfaces)
    for (const item of surface.items)
      if (item.kind === 'clause' && item.keyword === 'provides')
        forEachProvidedName(item.value, (callee) => {
          const slash = callee.indexOf('/');
          if (slash > 0 && startsUpper(callee, slash + 1))
            append(provided, callee.slice(0, slash), callee.slice(slash + 1));
        });
  for (const rule of importer.rules)
    walkItems(rule.items, (item) => {
      if (item.kind === 'clause' && item.keyword === 'ensures') qualifiedCreations(item.value, created);
    });
  for (const declaration of importer.spec.declarations) {
    if (declaration.kind !== 'block') continue;
    walkItems(declaration.items, (item) =>
      forEachItemExpr(item, (expr) =>
        walkExpr(expr, (e) => {
          const object = e.kind === 'member' ? e.a : undefined;
          const name = object?.kind === 'ident' ? object.name : undefined;
          const slash = name === undefined ? -1 : name.indexOf('/');
          if (name !== undefined && slash > 0) append(fields, name.slice(0, slash), e.name ?? '');
        }),
      ),
    );
  }
  return { provided, created, fields };
});

/**
 * `alias/Entity.created(status: v)` calls of an `ensures` value (through blocks and `if` bodies): alias → `(Entity,
 * v)` pairs.
 */
function qualifiedCreations(expr: Expr, out: Map<string, [string, string][]>): void {
  if (expr.kind === 'call') {
    const callee = expr.a;
    const entity = isDotMember(callee) && callee.name === 'created' ? callee.a : undefined;
    const qualified = entity?.kind === 'ident' ? entity.name : undefined;
    const slash = qualified === undefined ? -1 : qualified.indexOf('/');
    if (qualified === undefined || slash <= 0) return;
    for (const arg of kidsOf(expr).slice(1)) {
      const value = arg.kind === 'arg' && arg.name === 'status' ? arg.a : undefined;
      if (value?.kind !== 'ident' || value.name === undefined) continue;
      append(out, qualified.slice(0, slash), [qualified.slice(slash + 1), value.name]);
    }
  } else if (expr.kind === 'block') forEachKid(expr, (kid) => qualifiedCreations(kid, out));
  else if (expr.kind === 'if') for (const body of ifBodies(expr)) qualifiedCreations(body, out);
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

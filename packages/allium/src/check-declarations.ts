import type { Diagnostic } from './diagnostic.js';
import {
  aliasList,
  ambiguousImports,
  type Imports,
  namesInTypeSlots,
  triggerReachability,
} from './imports.js';
import { reachableTriggers, triggerRefs } from './triggers.js';
import type { SpecIndex } from './spec-index.js';
import { locationOf, startsUpper } from './walk.js';

/**
 * `allium.entity.unused` (an entity, internal or external) and `allium.definition.unused` (a value type or enum)
 * whose name appears nowhere in the file except its own declaration. `usedElsewhere` says whether a file importing
 * this one refers to a name.
 */
export function checkUnused(index: SpecIndex, usedElsewhere: (name: string) => boolean): Diagnostic[] {
  // A declaration's own name is not a use: a name declared twice and mentioned nowhere else is unused at both.
  const declared = new Map<string, number>();
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    const name =
      declaration.kind === 'block' || declaration.kind === 'variant' ? declaration.name?.name : undefined;
    if (name !== undefined) declared.set(name, (declared.get(name) ?? 0) + 1);
  }
  const diagnostics: Diagnostic[] = [];
  let bases: Set<string> | undefined;
  for (let b = 0; b < index.blocks.length; b += 1) {
    const block = index.blocks[b]!;
    const name = block.name.name;
    const uses = startsUpper(name)
      ? (index.spec.nameCounts.get(name) ?? 0) - (declared.get(name) ?? 0)
      : (namesInTypeSlots(index).get(name) ?? 0);
    if (uses > 0 || usedElsewhere(name)) continue;
    if (block.block === 'entity' || block.block === 'external entity') {
      // An entity a variant is based on is used, also when the base is a join `Base { … }`.
      if ((bases ??= variantBases(index)).has(name)) continue;
      diagnostics.push({
        code: 'allium.entity.unused',
        severity: 'warning',
        message: `Entity '${name}' is declared but not referenced elsewhere in this specification.`,
        location: block.name.location,
      });
    } else if (block.block === 'value' || block.block === 'enum') {
      diagnostics.push({
        code: 'allium.definition.unused',
        severity: 'warning',
        message: `Value '${name}' is declared but not referenced elsewhere.`,
        location: block.name.location,
      });
    }
  }
  return diagnostics;
}

/** The names variants are based on, plain or joins. */
function variantBases(index: SpecIndex): Set<string> {
  const names = new Set<string>();
  for (const declaration of index.spec.declarations)
    if (declaration.kind === 'variant' && declaration.base !== undefined) names.add(declaration.base.name);
  return names;
}

/**
 * `allium.deferred.missingLocationHint`, read from the text of the `deferred` line as the reference reads it: a line
 * holding only white space before the keyword, white space, then a name (`[A-Za-z_][A-Za-z0-9_.]*`), and after
 * the name no location hint (a quote, `http://`, `https://` or a `-- see:` comment). The message names the text
 * matched, which may end in a dot the parsed path does not have. Open questions are not diagnostics (the reference
 * reports none).
 */
export function checkDeferredAndQuestions(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const source = index.spec.source;
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    if (declaration.kind !== 'deferred') continue;
    const name = deferredNameWithoutHint(source, declaration.start);
    if (name === undefined) continue;
    diagnostics.push({
      code: 'allium.deferred.missingLocationHint',
      severity: 'warning',
      message: `Deferred specification '${name}' should include a location hint.`,
      location: declaration.location,
    });
  }
  return diagnostics;
}

/** Line ends as the reference's line-based reading sees them: `\n`, `\r`, U+2028 and U+2029. */
const isLineEnd = (c: number): boolean => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
// White space as the reference's line reading sees it: ASCII, without the vertical tab.
const isAsciiSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 12 || c === 13;
const startsName = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const continuesName = (c: number): boolean => startsName(c) || (c >= 48 && c <= 57) || c === 46;

/** The name a `deferred` keyword at `start` declares when its line has no location hint after it, else undefined. */
function deferredNameWithoutHint(source: string, start: number): string | undefined {
  for (let i = start - 1; i >= 0 && !isLineEnd(source.charCodeAt(i)); i -= 1)
    if (!isAsciiSpace(source.charCodeAt(i))) return undefined;
  const afterKeyword = start + 'deferred'.length;
  let nameStart = afterKeyword;
  while (nameStart < source.length && isAsciiSpace(source.charCodeAt(nameStart))) nameStart += 1;
  if (nameStart === afterKeyword || !startsName(source.charCodeAt(nameStart))) return undefined;
  let nameEnd = nameStart + 1;
  while (nameEnd < source.length && continuesName(source.charCodeAt(nameEnd))) nameEnd += 1;
  let lineEnd = nameEnd;
  while (lineEnd < source.length && !isLineEnd(source.charCodeAt(lineEnd))) lineEnd += 1;
  const rest = source.slice(nameEnd, lineEnd);
  if (rest.includes('"') || rest.includes('http://') || rest.includes('https://') || rest.includes('-- see:'))
    return undefined;
  return source.slice(nameStart, nameEnd);
}

const NOTHING_AMBIGUOUS: ReadonlyMap<string, readonly string[]> = new Map();

/** `allium.use.unresolvedPath`: a `use` whose path names no file of the check set. */
export function checkUsePaths(index: SpecIndex, checkSet: CheckSet): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    if (declaration.kind !== 'use' || resolveUsePath(index, declaration.path, checkSet) !== undefined)
      continue;
    diagnostics.push({
      code: 'allium.use.unresolvedPath',
      severity: 'warning',
      message: `Use path "${declaration.path}" does not resolve to a file in the current check set.`,
      location: declaration.pathLocation,
    });
  }
  return diagnostics;
}

/**
 * The files of a check set by their identity: each file's key ({@link normalisePath}d), to its index, and each index to
 * its key. The key is where the file is (the CLI gives its real path, as the reference keys its check set by the
 * canonical path: however a file is named, `use` paths resolve to it); by default, the name it was given, so that
 * `./specs/a.allium`, `specs//a.allium` and `specs/a.allium` are one file.
 */
export interface CheckSet {
  readonly files: ReadonlyMap<string, SpecIndex>;
  readonly keys: ReadonlyMap<SpecIndex, string>;
  /** Where `use` paths lead, when the caller can ask the file system (see {@link UseLocator}). */
  readonly locate?: UseLocator;
}

/**
 * The key of the file a `use` path of the file named `importer` (its name as given, `spec.file`) leads to, or
 * undefined when it leads to no file: a port for the caller that can ask the file system, as the reference does
 * (the importer's name's folder joined with the path, then the canonical path: `..` after a symbolic link taken from
 * where the link leads). Its keys must be the check set's keys. Without one, a `use` path is resolved by name
 * against the importer's key ({@link resolveUsePath}).
 */
export type UseLocator = (importer: string, path: string) => string | undefined;

/** The {@link CheckSet} of `indexes`, keyed by `keys` (default: their names); the first file of one key is kept. */
export function checkSetOf(
  indexes: readonly SpecIndex[],
  keys: readonly string[] = indexes.map((index) => index.spec.file),
  locate?: UseLocator,
): CheckSet {
  const files = new Map<string, SpecIndex>();
  const keyOf = new Map<SpecIndex, string>();
  indexes.forEach((index, i) => {
    const key = normalisePath(keys[i] ?? index.spec.file);
    keyOf.set(index, key);
    if (!files.has(key)) files.set(key, index);
  });
  return locate === undefined ? { files, keys: keyOf } : { files, keys: keyOf, locate };
}

/**
 * The check-set file a `use` path of `from` names, if any: where the check set's {@link UseLocator} says it leads, or
 * without one, relative to the importing file's key by name (extension included, as the reference resolves it).
 */
export function resolveUsePath(from: SpecIndex, path: string, checkSet: CheckSet): SpecIndex | undefined {
  if (checkSet.locate !== undefined) {
    const target = checkSet.locate(from.spec.file, path);
    return target === undefined ? undefined : checkSet.files.get(normalisePath(target));
  }
  const key = checkSet.keys.get(from) ?? normalisePath(from.spec.file);
  // The importing file's folder with its slash ('' for a file named without one, so the path stays relative).
  const folder = key.slice(0, key.lastIndexOf('/') + 1);
  return checkSet.files.get(normalisePath(path.startsWith('/') ? path : `${folder}${path}`));
}

/**
 * Whether `path` has something {@link normalisePath} changes: an empty segment (a doubled or final slash) or a `.` or
 * `..` segment. Most paths (the real paths the CLI keys files by) have none.
 */
const NOT_NORMAL = /\/\/|\/$|(?:^|\/)\.\.?(?:\/|$)/;

/** Collapses `.`/`..` segments and duplicate slashes of a POSIX path (pure; no file system). */
export function normalisePath(path: string): string {
  if (!NOT_NORMAL.test(path)) return path;
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
    else parts.push(part);
  }
  return `${path.startsWith('/') ? '/' : ''}${parts.join('/')}`;
}

/**
 * `allium.rule.unreachableTrigger` (info): a rule's `when:` listens for a trigger nothing offers. An unqualified
 * trigger is offered by a surface of the same file that provides it, a rule of the file that emits it (as its
 * leading `ensures` call), a file importing it whose surface provides it as `alias/T(…)`, or any file the file
 * imports from its check set (`allium.use.ambiguousReference`, a warning, when nothing local offers it and several
 * imported files do); a qualified one (`alias/T`) by the file
 * the alias names, and is left alone when that file is not in the check set (what it offers is unknowable).
 */
export function checkUnreachableTriggers(
  index: SpecIndex,
  imports: Imports,
  providedByImporters: ReadonlySet<string> = new Set(),
): Diagnostic[] {
  const reachable = reachableTriggers(index);
  const reachability = triggerReachability(index, imports, providedByImporters);
  const ambiguous = imports.size < 2 ? NOTHING_AMBIGUOUS : ambiguousImports(imports, reachableTriggers);
  const diagnostics: Diagnostic[] = [];
  for (let r = 0; r < index.rules.length; r += 1) {
    const rule = index.rules[r]!;
    for (let c = 0; c < rule.items.length; c += 1) {
      const clause = rule.items[c]!;
      if (clause.kind !== 'clause' || clause.keyword !== 'when') continue;
      for (const ref of triggerRefs(clause.value)) {
        let message: string;
        if (ref.qualified) {
          if (reachability(ref) !== false) continue;
          const alias = ref.name.slice(0, ref.name.indexOf('/'));
          message = `Rule '${rule.name.name}' listens for trigger '${ref.name}' but imported module '${alias}' does not provide or emit it.`;
        } else {
          const local = reachable.has(ref.name) || providedByImporters.has(ref.name);
          const aliases = local ? undefined : ambiguous.get(ref.name);
          if (aliases !== undefined)
            diagnostics.push({
              code: 'allium.use.ambiguousReference',
              severity: 'warning',
              message: `Rule '${rule.name.name}' listens for trigger '${ref.name}', which is provided or emitted by imported modules ${aliasList(aliases)}. Use a qualified name (e.g. '${aliases[0]}/${ref.name}').`,
              location: locationOf(index.spec, ref.at),
            });
          if (reachability(ref) === true) continue;
          message = `Rule '${rule.name.name}' listens for trigger '${ref.name}' but no local surface provides or rule emits it.`;
        }
        diagnostics.push({
          code: 'allium.rule.unreachableTrigger',
          severity: 'info',
          message,
          location: locationOf(index.spec, ref.at),
        });
      }
    }
  }
  return diagnostics;
}

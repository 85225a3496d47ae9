import type { Diagnostic } from './diagnostic.js';
import { reachableTriggers, triggerRefs } from './triggers.js';
import type { SpecIndex } from './spec-index.js';

/**
 * `allium.entity.unused` (an internal entity) and `allium.definition.unused` (a value type or enum) whose name
 * appears nowhere in the file except its own declaration. `usedElsewhere` says whether another file of the check
 * set mentions a name.
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
  for (let b = 0; b < index.blocks.length; b += 1) {
    const block = index.blocks[b]!;
    const name = block.name.name;
    const uses = (index.spec.nameCounts.get(name) ?? 0) - (declared.get(name) ?? 0);
    if (uses > 0 || usedElsewhere(name)) continue;
    if (block.block === 'entity') {
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

/** `allium.deferred.missingLocationHint`. Open questions are not diagnostics (the reference reports none). */
export function checkDeferredAndQuestions(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    if (declaration.kind === 'deferred' && declaration.hint === undefined) {
      diagnostics.push({
        code: 'allium.deferred.missingLocationHint',
        severity: 'warning',
        message: `Deferred specification '${declaration.path}' should include a location hint.`,
        location: declaration.location,
      });
    }
  }
  return diagnostics;
}

/** `allium.use.unresolvedPath`: a `use` whose path names no file of the check set. */
export function checkUsePaths(index: SpecIndex, checkSet: ReadonlySet<string>): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (let d = 0; d < index.spec.declarations.length; d += 1) {
    const declaration = index.spec.declarations[d]!;
    if (
      declaration.kind !== 'use' ||
      resolveUsePath(index.spec.file, declaration.path, checkSet) !== undefined
    )
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

/** The check-set file a `use` path names (relative to the importing file; `.allium` optional), if any. */
export function resolveUsePath(
  from: string,
  path: string,
  checkSet: ReadonlySet<string>,
): string | undefined {
  const directory = from.includes('/') ? from.slice(0, from.lastIndexOf('/')) : '';
  const joined = normalisePath(path.startsWith('/') ? path : `${directory}/${path}`);
  return [joined, `${joined}.allium`].find((candidate) => checkSet.has(candidate));
}

/** Collapses `.`/`..` segments and duplicate slashes of a POSIX path (pure; no file system). */
export function normalisePath(path: string): string {
  const parts: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..' && parts.length > 0 && parts[parts.length - 1] !== '..') parts.pop();
    else parts.push(part);
  }
  return `${path.startsWith('/') ? '/' : ''}${parts.join('/')}`;
}

/**
 * `allium.rule.unreachableTrigger` (info): a rule's `when:` listens for an unqualified trigger that no surface of
 * the same file provides and no rule of the file emits (as its leading `ensures` call). Qualified triggers
 * (`alias/T`) are left alone: what another module offers is not judged here.
 */
export function checkUnreachableTriggers(index: SpecIndex): Diagnostic[] {
  const reachable = reachableTriggers(index);
  const diagnostics: Diagnostic[] = [];
  for (let r = 0; r < index.rules.length; r += 1) {
    const rule = index.rules[r]!;
    for (let c = 0; c < rule.items.length; c += 1) {
      const clause = rule.items[c]!;
      if (clause.kind !== 'clause' || clause.keyword !== 'when') continue;
      for (const ref of triggerRefs(clause.value)) {
        if (ref.qualified || reachable.has(ref.name)) continue;
        diagnostics.push({
          code: 'allium.rule.unreachableTrigger',
          severity: 'info',
          message: `Rule '${rule.name.name}' listens for trigger '${ref.name}' but no local surface provides or rule emits it.`,
          location: { file: index.spec.file, line: ref.at.line, col: ref.at.col },
        });
      }
    }
  }
  return diagnostics;
}

import type { Diagnostic } from './diagnostic.js';
import { triggerCalls } from './check-rules.js';
import { clausesOf, type SpecIndex } from './spec-index.js';
import { calleeName, walkExpr } from './walk.js';

/**
 * `allium.entity.unused` (an internal entity) and `allium.definition.unused` (a value type or enum) whose name
 * appears nowhere in the file except its own declaration. `usedElsewhere` says whether another file of the check
 * set mentions a name.
 */
export function checkUnused(index: SpecIndex, usedElsewhere: (name: string) => boolean): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const block of index.blocks) {
    const name = block.name.name;
    if ((index.spec.nameCounts.get(name) ?? 0) > 1 || usedElsewhere(name)) continue;
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
  for (const declaration of index.spec.declarations) {
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
  for (const declaration of index.spec.declarations) {
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
 * `allium.rule.unreachableTrigger` (info): a rule listens for a trigger that no surface provides and no rule
 * emits anywhere in the check set.
 */
export function checkUnreachableTriggers(index: SpecIndex, produced: ReadonlySet<string>): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (const rule of index.rules) {
    for (const clause of clausesOf(rule.items, 'when')) {
      for (const call of triggerCalls(clause.value)) {
        const name = calleeName(call);
        if (name === undefined || produced.has(name) || name.includes('/')) continue;
        diagnostics.push({
          code: 'allium.rule.unreachableTrigger',
          severity: 'info',
          message: `Rule '${rule.name.name}' listens for trigger '${name}' but no local surface provides or rule emits it.`,
          location: { file: index.spec.file, line: call.line, col: call.col },
        });
      }
    }
  }
  return diagnostics;
}

/** Trigger names surfaces provide and rules emit (bare PascalCase calls in `ensures`/`provides`). */
export function producedTriggers(index: SpecIndex): Set<string> {
  const names = new Set<string>();
  const collect = (keyword: string, blocks: typeof index.rules): void => {
    for (const block of blocks) {
      for (const clause of clausesOf(block.items, keyword)) {
        walkExpr(clause.value, (e) => {
          const name = calleeName(e);
          if (name !== undefined && /^[A-Z]/.test(name) && !index.entityNames.has(name)) names.add(name);
        });
      }
    }
  };
  collect('provides', index.surfaces);
  collect('ensures', index.rules);
  return names;
}

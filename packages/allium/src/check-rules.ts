import type { BlockItem, Expr } from './ast.js';
import type { Diagnostic } from './diagnostic.js';
import type { SpecIndex } from './spec-index.js';
import { specFacts } from './spec-facts.js';
import { startsLower } from './walk.js';

const COMPARISONS = new Set(['=', '!=', '<', '<=', '>', '>=']);

/**
 * The trigger forms a `when:` accepts: a call `T(…)` (also `alias/T(…)`, `x.T(…)`), a binding `x: E.f becomes v`,
 * `x: E.f transitions_to v`, `x: E.f` or `x: E.f <= now`, a comparison on a member `E.f <= now`, and `A or B`
 * of valid forms. Anything else (an empty clause, `E.f becomes v` with no binding, …) is unsupported.
 */
export function isValidTrigger(value: Expr): boolean {
  switch (value.kind) {
    case 'call':
      return value.kids[0]?.kind === 'ident' || value.kids[0]?.kind === 'member';
    case 'binding': {
      const inner = value.kids[0];
      if (inner?.kind === 'member') return true;
      return (
        inner?.kind === 'binary' &&
        (inner.op === 'becomes' || inner.op === 'transitions_to' || COMPARISONS.has(inner.op ?? ''))
      );
    }
    case 'binary':
      if (value.op === 'or') return value.kids.every(isValidTrigger);
      return COMPARISONS.has(value.op ?? '') && value.kids[0]?.kind === 'member';
    default:
      return false;
  }
}

/** The first `name: value` parameter of a trigger call (looking into `or`), if any. */
function firstNamedParameter(value: Expr): Expr | undefined {
  if (value.kind === 'call') return value.kids.slice(1).find((arg) => arg.kind === 'arg');
  if (value.kind === 'binary' && value.op === 'or') {
    for (const kid of value.kids) {
      const found = firstNamedParameter(kid);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * `allium.rule.invalidTrigger`, once per `when:` clause of a rule: an unsupported trigger form, or else the first
 * external or chained trigger parameter written `name: value` (that form is for emissions only).
 */
export function checkInvalidTriggers(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const file = index.spec.file;
  for (let r = 0; r < index.rules.length; r += 1) {
    const rule = index.rules[r]!;
    for (let c = 0; c < rule.items.length; c += 1) {
      const clause = rule.items[c]!;
      if (clause.kind !== 'clause' || clause.keyword !== 'when') continue;
      if (!isValidTrigger(clause.value)) {
        diagnostics.push({
          code: 'allium.rule.invalidTrigger',
          severity: 'error',
          message: `Rule '${rule.name.name}' uses an unsupported trigger form in 'when:'.`,
          location: clause.location,
        });
        continue;
      }
      const arg = firstNamedParameter(clause.value);
      if (arg?.name === undefined) continue;
      diagnostics.push({
        code: 'allium.rule.invalidTrigger',
        severity: 'error',
        message:
          `Rule '${rule.name.name}' trigger parameter '${arg.name}' uses a 'name: value' form. External-stimulus ` +
          `and chained trigger parameters are bare names (optionally suffixed with '?', or '_' to discard); the ` +
          `'name: value' form is only valid in trigger emissions. Write '${arg.name}' without the annotation.`,
        location: { file, line: arg.line, col: arg.col },
      });
    }
  }
  return diagnostics;
}

/**
 * `allium.rule.undefinedBinding`: the root of a member access (`x.f`) in `requires`/`ensures` that nothing binds.
 * Conservative on purpose: only lower-case roots of member chains are judged, so bare words never raise it.
 */
export function checkUndefinedBindings(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const facts = specFacts(index);
  for (let r = 0; r < index.rules.length; r += 1) {
    const rule = index.rules[r]!;
    const ruleFacts = facts.rules.get(rule);
    if (ruleFacts === undefined) continue;
    let reported: Set<string> | undefined;
    const judge = (roots: readonly Expr[]): void => {
      for (let m = 0; m < roots.length; m += 1) {
        const object = roots[m]!.kids[0];
        const name = object?.name;
        if (object === undefined || name === undefined || !startsLower(name) || name.includes('/')) continue;
        if (ruleFacts.bound.has(name) || index.globalNames.has(name) || reported?.has(name) === true)
          continue;
        (reported ??= new Set()).add(name);
        diagnostics.push({
          code: 'allium.rule.undefinedBinding',
          severity: 'error',
          message: `Rule '${rule.name.name}' references '${name}' but no matching binding exists in context, trigger params, default instances, or local lets.`,
          location: { file: index.spec.file, line: object.line, col: object.col },
        });
      }
    };
    judge(ruleFacts.requiresRoots);
    judge(ruleFacts.ensuresRoots);
  }
  return diagnostics;
}

/** `allium.let.duplicateBinding`: the same `let` name twice in one item list or one block. */
export function checkDuplicateLets(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const file = index.spec.file;
  const report = (rule: string, name: string, line: number, col: number): void => {
    diagnostics.push({
      code: 'allium.let.duplicateBinding',
      severity: 'error',
      message: `Rule '${rule}' binds '${name}' with let more than once in the same scope.`,
      location: { file, line, col },
    });
  };
  const facts = specFacts(index);
  for (let r = 0; r < index.rules.length; r += 1) {
    const rule = index.rules[r]!;
    const visitList = (items: readonly BlockItem[]): void => {
      let seen: Set<string> | undefined;
      for (let i = 0; i < items.length; i += 1) {
        const item = items[i]!;
        if (item.kind === 'let') {
          if (seen?.has(item.name.name) === true)
            report(rule.name.name, item.name.name, item.name.location.line, item.name.location.col);
          (seen ??= new Set()).add(item.name.name);
        }
        if (item.kind === 'for') visitList(item.items);
        if (item.kind === 'if') {
          for (const branch of item.branches) visitList(branch.items);
          if (item.elseItems !== undefined) visitList(item.elseItems);
        }
      }
    };
    visitList(rule.items);
    const letBlocks = facts.rules.get(rule)?.letBlocks ?? [];
    for (let b = 0; b < letBlocks.length; b += 1) {
      const block = letBlocks[b]!;
      const seen = new Set<string>();
      for (const item of block.kids) {
        if (item.kind !== 'let' || item.name === undefined) continue;
        if (seen.has(item.name)) report(rule.name.name, item.name, item.line, item.col);
        seen.add(item.name);
      }
    }
  }
  return diagnostics;
}

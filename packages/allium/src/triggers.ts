import { forEachKid, kidsOf, type BlockItem, type Expr } from './ast.js';
import { perSpec } from './spec-index.js';
import { calleeName, startsUpper } from './walk.js';

const capitalised = (name: string | undefined): name is string => name !== undefined && startsUpper(name);
/** A trigger of the file's own: a capitalised name with no `alias/` before it. */
const localTrigger = (name: string | undefined): name is string => capitalised(name) && !name.includes('/');

/** The bodies of an `if` expression (`kids` alternate condition, body; an odd last kid is the else body). */
export function ifBodies(expr: Expr): Expr[] {
  const kids = kidsOf(expr);
  return kids.filter((_, i) => i % 2 === 1 || (i === kids.length - 1 && kids.length % 2 === 1));
}

/** The body items of a `for` expression (after the collection and the filter slot). */
function forBody(expr: Expr): Expr[] {
  return kidsOf(expr).slice(2);
}

/**
 * The callee names of the calls a surface `provides:` value offers (through blocks, `when` guards, `if`, `for`), each
 * given to `visit` in the order they are written.
 */
export function forEachProvidedName(expr: Expr, visit: (callee: string) => void): void {
  if (expr.kind === 'call') {
    const callee = expr.a;
    if (callee?.kind === 'ident' && callee.name !== undefined) visit(callee.name);
  } else if (expr.kind === 'block') forEachKid(expr, (kid) => forEachProvidedName(kid, visit));
  else if (expr.kind === 'binary' && expr.op === 'when') {
    if (expr.a !== undefined) forEachProvidedName(expr.a, visit);
  } else if (expr.kind === 'if') ifBodies(expr).forEach((body) => forEachProvidedName(body, visit));
  else if (expr.kind === 'for') forBody(expr).forEach((body) => forEachProvidedName(body, visit));
}

/** The leading call of an `ensures` value: the first item of a block, each `if` branch, a `for` body. */
function leadingEnsuresCall(expr: Expr, out: Set<string>): void {
  if (expr.kind === 'call') {
    const callee = expr.a;
    if (callee?.kind === 'ident' && localTrigger(callee.name)) out.add(callee.name);
  } else if (expr.kind === 'block') {
    if (expr.a !== undefined) leadingEnsuresCall(expr.a, out);
  } else if (expr.kind === 'if') ifBodies(expr).forEach((body) => leadingEnsuresCall(body, out));
  else if (expr.kind === 'for') {
    const first = forBody(expr)[0];
    if (first !== undefined) leadingEnsuresCall(first, out);
  }
}

function emittedFromItems(items: readonly BlockItem[], out: Set<string>): void {
  for (let i = 0; i < items.length; i += 1) {
    const item = items[i]!;
    if (item.kind === 'clause' && item.keyword === 'ensures') leadingEnsuresCall(item.value, out);
    if (item.kind === 'for') emittedFromItems(item.items, out);
    if (item.kind === 'if') {
      for (const branch of item.branches) emittedFromItems(branch.items, out);
      emittedFromItems(item.elseItems ?? [], out);
    }
  }
}

/**
 * Triggers something in the file offers: those its surfaces provide and those its rules emit, as the reference
 * counts them (the leading call of each `ensures`). Computed once per index.
 */
export const reachableTriggers = perSpec((index): ReadonlySet<string> => {
  const found = new Set<string>();
  for (const surface of index.surfaces)
    for (const item of surface.items)
      if (item.kind === 'clause' && item.keyword === 'provides')
        forEachProvidedName(item.value, (callee) => {
          if (localTrigger(callee)) found.add(callee);
        });
  for (let r = 0; r < index.rules.length; r += 1) {
    const rule = index.rules[r]!;
    emittedFromItems(rule.items, found);
  }
  return found;
});

/** The trigger calls of a `when` value: `T(…)`, and each side of `A(…) or B(…)`. */
export function triggerCalls(value: Expr): Expr[] {
  if (value.kind === 'call' && calleeName(value) !== undefined) return [value];
  if (value.kind === 'binary' && value.op === 'or') return kidsOf(value).flatMap(triggerCalls);
  return [];
}

/** The name a trigger call's argument binds: `x` for `x` and for an optional `x?`. */
export function triggerParameterName(arg: Expr): string | undefined {
  return arg.kind === 'optional' ? arg.a?.name : arg.name;
}

/** A trigger a rule listens for in `when:` (`T(…)`, `alias/T(…)`, each side of `A(…) or B(…)`). */
export interface TriggerRef {
  readonly name: string;
  readonly qualified: boolean;
  readonly at: Expr;
}

/** The triggers a `when:` value listens for, in source order. */
export function triggerRefs(expr: Expr): TriggerRef[] {
  const refs: TriggerRef[] = [];
  collectTriggerRefs(expr, refs);
  return refs;
}

function collectTriggerRefs(expr: Expr, out: TriggerRef[]): void {
  if (expr.kind === 'call') {
    const callee = expr.a;
    const name = callee?.kind === 'ident' ? callee.name : undefined;
    if (callee === undefined || name === undefined) return;
    if (startsUpper(name, name.lastIndexOf('/') + 1))
      out.push({ name, qualified: name.includes('/'), at: callee });
  } else if (expr.kind === 'binary' && (expr.op === 'and' || expr.op === 'or' || expr.op === 'implies')) {
    forEachKid(expr, (kid) => collectTriggerRefs(kid, out));
  }
}

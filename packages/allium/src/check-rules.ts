import {
  ARITHMETIC_OPS,
  COMPARISON_OPS,
  findKid,
  kidAt,
  kidCount,
  kidsOf,
  LOGICAL_OPS,
  MEMBERSHIP_OPS,
  type BlockItem,
  type Expr,
} from './ast.js';
import type { Diagnostic } from './diagnostic.js';
import type { SpecIndex } from './spec-index.js';
import { ifBodies } from './triggers.js';
import { isDotMember, locationOf, startsUpper } from './walk.js';

const COMPARISONS = new Set(COMPARISON_OPS);

/**
 * The trigger forms a `when:` accepts: a call `T(…)` (also `alias/T(…)`, `x.T(…)`), a binding `x: E.f becomes v`,
 * `x: E.f transitions_to v`, `x: E.f` or `x: E.f <= now`, a comparison on a member `E.f <= now`, and `A or B`
 * of valid forms. Anything else (an empty clause, `E.f becomes v` with no binding, …) is unsupported.
 */
export function isValidTrigger(value: Expr): boolean {
  switch (value.kind) {
    case 'call':
      return value.a?.kind === 'ident' || isDotMember(value.a);
    case 'binding': {
      const inner = value.a;
      if (isDotMember(inner)) return true;
      return (
        inner?.kind === 'binary' &&
        (inner.op === 'becomes' || inner.op === 'transitions_to' || COMPARISONS.has(inner.op ?? ''))
      );
    }
    case 'binary':
      if (value.op === 'or') return kidsOf(value).every(isValidTrigger);
      return COMPARISONS.has(value.op ?? '') && isDotMember(value.a);
    default:
      return false;
  }
}

/** The first `name: value` parameter of a trigger call (looking into `or`), if any. */
function firstNamedParameter(value: Expr): Expr | undefined {
  if (value.kind === 'call') return findKid(value, 1, (arg) => arg.kind === 'arg');
  if (value.kind === 'binary' && value.op === 'or') {
    for (const kid of kidsOf(value)) {
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
          location: locationOf(index.spec, clause),
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
        location: locationOf(index.spec, arg),
      });
    }
  }
  return diagnostics;
}

/**
 * `allium.rule.undefinedBinding`, found where the reference looks and nowhere else:
 * - a plain lower-case name `x` in `x.f` that nothing binds, in a `requires`/`ensures` clause of the rule or of its
 *   block-level `if`/`for` bodies, reached only through comparisons, `and`/`or`/`implies`, arithmetic, `in`,
 *   `not`/`exists`, `if` expressions, blocks, `for` expressions (collection and body, not the filter) and calls
 *   (not a `x.f(…)` callee); `x.f.g`, `x?.f` and what lies inside `where`, `with`, `|`, `??` or literals are not
 *   judged; a name is plain unless it starts with an ASCII capital (`_x` and `é` are judged). Bound: given names,
 *   default instances, the `when:` clause's parameters and bindings, `let`s of the same or an enclosing level,
 *   loop variables, lambda parameters of the same call; a declared name is not (a lower-case entity's, a `use`
 *   alias's, a rule's own);
 * - a `when: x: Entity` binding (an invalid trigger form) used by a top-level `requires`/`ensures` clause: reported
 *   once per rule, for the first such binding that a clause uses, at the first clause using it (a rule whose first
 *   `when: x: Entity` names a binding nothing uses reports the next one's).
 */
export function checkUndefinedBindings(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  for (let r = 0; r < index.rules.length; r += 1) {
    const rule = index.rules[r]!;
    const message = (name: string): string =>
      `Rule '${rule.name.name}' references '${name}' but no matching binding exists in context, trigger params, default instances, or local lets.`;
    const bound = new Set<string>();
    for (let i = 0; i < rule.items.length; i += 1) {
      const item = rule.items[i]!;
      if (item.kind === 'clause' && item.keyword === 'when') boundByTrigger(item.value, bound);
    }
    const isBound = (name: string, scope: ReadonlySet<string>): boolean =>
      scope.has(name) || index.globalNames.has(name) || BUILTIN_NAMES.has(name);
    const judge = (e: Expr, scope: ReadonlySet<string>): void =>
      judgeRoots(e, scope, isBound, (object, name) =>
        diagnostics.push({
          code: 'allium.rule.undefinedBinding',
          severity: 'error',
          message: message(name),
          location: locationOf(index.spec, object),
        }),
      );
    judgeItems(rule.items, bound, judge);
    for (const item of rule.items) {
      if (item.kind !== 'clause' || item.keyword !== 'when' || item.value.kind !== 'binding') continue;
      const name = item.value.name;
      if (name === undefined || item.value.a?.kind !== 'ident' || !startsUpper(item.value.a.name ?? ''))
        continue;
      const user = rule.items.find(
        (other) =>
          other.kind === 'clause' &&
          (other.keyword === 'requires' || other.keyword === 'ensures') &&
          containsName(other.value, name),
      );
      if (user?.kind !== 'clause') continue;
      diagnostics.push({
        code: 'allium.rule.undefinedBinding',
        severity: 'error',
        message: message(name),
        location: locationOf(index.spec, user),
      });
      break;
    }
  }
  return diagnostics;
}

/** Names never reported as unbound (besides the index's global names). */
const BUILTIN_NAMES = new Set(['config', 'now', 'this', 'within', 'true', 'false', 'null']);
/** The binary operators whose two sides the reference's unbound-name walk visits. */
const JUDGED_BINARY = new Set([...COMPARISON_OPS, ...LOGICAL_OPS, ...ARITHMETIC_OPS, ...MEMBERSHIP_OPS]);

/** The names a `when:` clause binds: binding names, plain positional and named call arguments, through `or`/`and`. */
function boundByTrigger(value: Expr, out: Set<string>): void {
  if (value.kind === 'binding' && value.name !== undefined) out.add(value.name);
  else if (value.kind === 'call') {
    for (let k = 1; k < kidCount(value); k += 1) {
      const arg = kidAt(value, k)!;
      if ((arg.kind === 'ident' || arg.kind === 'arg') && arg.name !== undefined) out.add(arg.name);
    }
  } else if (value.kind === 'binary' && (value.op === 'and' || value.op === 'or' || value.op === 'implies'))
    for (let k = 0; k < kidCount(value); k += 1) boundByTrigger(kidAt(value, k)!, out);
}

/** Judges the `requires`/`ensures` clauses of `items` and of their `if`/`for` bodies, with each level's `let`s bound. */
function judgeItems(
  items: readonly BlockItem[],
  parent: ReadonlySet<string>,
  judge: (e: Expr, scope: ReadonlySet<string>) => void,
): void {
  // Index loops here and in judgeRoots: they run over every rule before the JIT has optimised them, where a
  // `for…of` allocates an iterator result per element (see walk.ts).
  let scope = parent;
  for (let i = 0; i < items.length; i += 1) {
    const item = items[i]!;
    if (item.kind === 'let') {
      if (scope === parent) scope = new Set(parent);
      (scope as Set<string>).add(item.name.name);
    }
  }
  for (let i = 0; i < items.length; i += 1) {
    const item = items[i]!;
    if (item.kind === 'clause' && (item.keyword === 'requires' || item.keyword === 'ensures'))
      judge(item.value, scope);
    else if (item.kind === 'if') {
      for (let b = 0; b < item.branches.length; b += 1) judgeItems(item.branches[b]!.items, scope, judge);
      if (item.elseItems !== undefined) judgeItems(item.elseItems, scope, judge);
    } else if (item.kind === 'for') judgeItems(item.items, new Set([...scope, ...item.bindings]), judge);
  }
}

function judgeRoots(
  e: Expr,
  scope: ReadonlySet<string>,
  isBound: (name: string, scope: ReadonlySet<string>) => boolean,
  report: (object: Expr, name: string) => void,
): void {
  switch (e.kind) {
    case 'member': {
      const object = e.a;
      const name = object?.name;
      if (e.op !== '.' || object?.kind !== 'ident' || name === undefined) return;
      if (!startsUpper(name) && !name.includes('/') && !isBound(name, scope)) report(object, name);
      return;
    }
    case 'binary':
      if (JUDGED_BINARY.has(e.op ?? ''))
        for (let k = 0; k < kidCount(e); k += 1) judgeRoots(kidAt(e, k)!, scope, isBound, report);
      return;
    case 'unary':
    case 'if':
      for (let k = 0; k < kidCount(e); k += 1) judgeRoots(kidAt(e, k)!, scope, isBound, report);
      return;
    case 'block': {
      let inner: Set<string> | undefined;
      for (let k = 0; k < kidCount(e); k += 1) {
        const kid = kidAt(e, k)!;
        if (kid.kind === 'let') {
          const value = kid.a;
          if (value !== undefined) judgeRoots(value, inner ?? scope, isBound, report);
          if (kid.name !== undefined) (inner ??= new Set(scope)).add(kid.name);
        } else judgeRoots(kid, inner ?? scope, isBound, report);
      }
      return;
    }
    case 'for': {
      const collection = e.a;
      const body = e.rest[0];
      if (collection !== undefined) judgeRoots(collection, scope, isBound, report);
      if (body !== undefined)
        judgeRoots(body, new Set([...scope, ...(e.name?.split(',') ?? [])]), isBound, report);
      return;
    }
    case 'call': {
      const callee = e.a;
      if (callee !== undefined && callee.kind !== 'member') judgeRoots(callee, scope, isBound, report);
      let inner: Set<string> | undefined;
      for (let k = 1; k < kidCount(e); k += 1) {
        const arg = kidAt(e, k)!;
        if (arg.kind === 'lambda' && arg.name !== undefined) (inner ??= new Set(scope)).add(arg.name);
      }
      for (let k = 1; k < kidCount(e); k += 1) {
        const arg = kidAt(e, k)!;
        const judged = arg.kind === 'lambda' || arg.kind === 'arg' ? arg.a : arg;
        if (judged !== undefined) judgeRoots(judged, inner ?? scope, isBound, report);
      }
      return;
    }
    default:
      return;
  }
}

/** True when `name` occurs in `e` as a plain name, a binding or a lambda parameter (not after `->`). */
function containsName(e: Expr, name: string): boolean {
  if (e.kind === 'ident') return e.name === name;
  if ((e.kind === 'binding' || e.kind === 'lambda') && e.name === name) return true;
  const last = e.kind === 'binary' && e.op === '->' ? 1 : kidCount(e);
  for (let k = 0; k < last; k += 1) if (containsName(kidAt(e, k)!, name)) return true;
  return false;
}

/**
 * `allium.let.duplicateBinding` (error): a `let` name bound twice anywhere in one rule, as the reference counts
 * them: its items and those nested in block-level `for`/`if` bodies, and the `let`s inside its clause values
 * (blocks, `for` bodies, `if` branches and `let` values), in source order; reported at each repeated name.
 */
export function checkDuplicateLets(index: SpecIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const file = index.spec.file;
  const source = index.spec.source;
  for (let r = 0; r < index.rules.length; r += 1) {
    const seen = new Set<string>();
    const note = (name: string, line: number, col: number): void => {
      if (!seen.has(name)) {
        seen.add(name);
        return;
      }
      diagnostics.push({
        code: 'allium.let.duplicateBinding',
        severity: 'error',
        message: `Duplicate let binding '${name}' in this rule.`,
        location: { file, line, col },
      });
    };
    const visitExpr = (e: Expr): void => {
      if (e.kind === 'let' && e.name !== undefined) {
        // The name's column: after `let` and the blanks that follow it on the keyword's line.
        let at = e.start + 3;
        while (source.charCodeAt(at) === 32 || source.charCodeAt(at) === 9) at += 1;
        const { line, col } = index.spec.lines.position(at);
        note(e.name, line, col);
        if (e.a !== undefined) visitExpr(e.a);
      } else if (e.kind === 'block') for (let k = 0; k < kidCount(e); k += 1) visitExpr(kidAt(e, k)!);
      else if (e.kind === 'for') {
        if (e.rest[0] !== undefined) visitExpr(e.rest[0]);
      } else if (e.kind === 'if') for (const body of ifBodies(e)) visitExpr(body);
    };
    const visitItems = (items: readonly BlockItem[]): void => {
      for (let i = 0; i < items.length; i += 1) {
        const item = items[i]!;
        if (item.kind === 'let') note(item.name.name, item.name.location.line, item.name.location.col);
        else if (item.kind === 'for') visitItems(item.items);
        else if (item.kind === 'if') {
          for (let b = 0; b < item.branches.length; b += 1) visitItems(item.branches[b]!.items);
          if (item.elseItems !== undefined) visitItems(item.elseItems);
        } else if (item.kind === 'clause') visitExpr(item.value);
      }
    };
    visitItems(index.rules[r]!.items);
  }
  return diagnostics;
}

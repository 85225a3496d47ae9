import type { BlockItem, Declaration, Expr, ParsedSpec } from './ast.js';
import type { SourceLocation } from './diagnostic.js';

/** Calls `visit` on `expr` and every expression beneath it, parents first. Iterative, so deep input cannot overflow. */
export function walkExpr(expr: Expr, visit: (e: Expr) => void): void {
  drain([expr], visit, undefined);
}

/**
 * How many levels deep `expr`'s tree is (a leaf: 1), counted up to `limit + 1` and no further. Iterative, as it
 * measures trees too deep for a walk that recurses (see the parser's MAX_DEPTH).
 */
export function exprHeight(expr: Expr, limit: number): number {
  const nodes: Expr[] = [expr];
  const levels: number[] = [1];
  let height = 0;
  for (let next = nodes.pop(); next !== undefined; next = nodes.pop()) {
    const level = levels.pop() as number;
    if (level > height) height = level;
    if (height > limit) return height;
    const rest = next.rest;
    for (let i = 0; i < rest.length; i += 1) {
      nodes.push(rest[i]!);
      levels.push(level + 1);
    }
    if (next.b !== undefined) {
      nodes.push(next.b);
      levels.push(level + 1);
    }
    if (next.a !== undefined) {
      nodes.push(next.a);
      levels.push(level + 1);
    }
  }
  return height;
}

/*
 * The walks below run over every node of a large file once per check run, mostly before the JIT has optimised
 * them, so they use index loops (a `for…of` allocates an iterator result per element in unoptimised code) and
 * allocate no closure or array per item.
 */

/** Visits every expression on `stack` and beneath it (parents first, kids in order), passing `item` along. */
function drain<T>(stack: Expr[], visit: (e: Expr, item: T) => void, item: T): void {
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    visit(next, item);
    const rest = next.rest;
    for (let i = rest.length - 1; i >= 0; i -= 1) stack.push(rest[i]!);
    if (next.b !== undefined) stack.push(next.b);
    if (next.a !== undefined) stack.push(next.a);
  }
}

/** Calls `visit` on every expression directly held by an item (not those of nested items), in source order. */
export function forEachItemExpr(item: BlockItem, visit: (expr: Expr) => void): void {
  const stack: Expr[] = [];
  pushItemExprs(item, stack);
  for (let expr = stack.pop(); expr !== undefined; expr = stack.pop()) visit(expr);
}

/** Pushes the expressions an item holds directly, last first (so popping yields them in source order). */
function pushItemExprs(item: BlockItem, stack: Expr[]): void {
  switch (item.kind) {
    case 'clause':
    case 'field':
    case 'let':
      stack.push(item.value);
      return;
    case 'for':
      if (item.filter !== undefined) stack.push(item.filter);
      stack.push(item.collection);
      return;
    case 'if':
      for (let i = item.branches.length - 1; i >= 0; i -= 1) {
        const branch = item.branches[i];
        if (branch !== undefined) stack.push(branch.condition);
      }
      return;
    case 'invariant':
      stack.push(item.body);
      return;
    default:
      return;
  }
}

/** Calls `visit` on every item, descending into block-level `for`/`if` bodies (parents first). */
export function walkItems(items: readonly BlockItem[], visit: (item: BlockItem) => void): void {
  for (let i = 0; i < items.length; i += 1) {
    const item = items[i];
    if (item === undefined) continue;
    visit(item);
    if (item.kind === 'for') walkItems(item.items, visit);
    else if (item.kind === 'if') {
      for (let b = 0; b < item.branches.length; b += 1) walkItems(item.branches[b]?.items ?? [], visit);
      if (item.elseItems !== undefined) walkItems(item.elseItems, visit);
    }
  }
}

/**
 * Calls `visit` on every expression of the items and of the items nested in block-level `for`/`if` (parents
 * first), with the item that holds it. One walk with one stack: the cheap way to look at a whole block.
 */
export function walkItemExprs(items: readonly BlockItem[], visit: (e: Expr, item: BlockItem) => void): void {
  walkItemList(items, visit, []);
}

function walkItemList(
  items: readonly BlockItem[],
  visit: (e: Expr, item: BlockItem) => void,
  stack: Expr[],
): void {
  for (let i = 0; i < items.length; i += 1) {
    const item = items[i];
    if (item === undefined) continue;
    pushItemExprs(item, stack);
    drain(stack, visit, item);
    if (item.kind === 'for') walkItemList(item.items, visit, stack);
    else if (item.kind === 'if') {
      for (let b = 0; b < item.branches.length; b += 1)
        walkItemList(item.branches[b]?.items ?? [], visit, stack);
      if (item.elseItems !== undefined) walkItemList(item.elseItems, visit, stack);
    }
  }
}

/**
 * Calls `visit` on every expression anywhere in a declaration, parents first, with the item that holds it
 * (`undefined` for the body of a top-level invariant or a default's value).
 */
export function walkDeclaration(
  declaration: Declaration,
  visit: (e: Expr, item: BlockItem | undefined) => void,
): void {
  switch (declaration.kind) {
    case 'block':
    case 'variant':
      walkItemExprs(declaration.items, visit);
      return;
    case 'invariant':
      drain([declaration.body], visit, undefined);
      return;
    case 'default':
      drain([declaration.value], visit, undefined);
      return;
    default:
      return;
  }
}

/**
 * The name of a plain identifier, not of a qualified `alias/Name` (which this parser keeps as an identifier with a
 * `/`, and the reference as a node of another kind that its checks matching a name never take).
 */
export function plainName(expr: Expr | undefined): string | undefined {
  return expr?.kind === 'ident' && expr.name?.includes('/') === false ? expr.name : undefined;
}

/** The root name of a member chain (`a.b.c` → `a`), or `undefined` when it does not start at a name. */
export function rootName(expr: Expr): string | undefined {
  let current: Expr | undefined = expr;
  while (current?.kind === 'member') current = current.a;
  return current?.kind === 'ident' ? current.name : undefined;
}

/** A name with no `alias/` qualifier (`Order`, not `core/Order`). */
export function isPlainIdent(expr: Expr | undefined): boolean {
  return expr?.kind === 'ident' && !(expr.name ?? '').includes('/');
}

/**
 * `a.b`, not `a?.b`: the reference's optional access is a node of another kind, which its shape checks (a status
 * assignment, `E.created(…)`, a trigger's member) never take.
 */
export function isDotMember(e: Expr | undefined): e is Expr & { readonly kind: 'member' } {
  return e?.kind === 'member' && e.op === '.';
}

/** `x.f` with a plain name on the left → `[x, f]`. */
export function simpleMember(expr: Expr | undefined): [string, string] | undefined {
  if (!isDotMember(expr)) return undefined;
  const object = expr.a;
  if (object?.kind !== 'ident' || object.name === undefined || expr.name === undefined) return undefined;
  return [object.name, expr.name];
}

/** The name of a call's callee when it is a plain identifier (`Foo(…)` → `Foo`). */
export function calleeName(expr: Expr): string | undefined {
  if (expr.kind !== 'call') return undefined;
  const callee = expr.a;
  return callee?.kind === 'ident' ? callee.name : undefined;
}

/** `E.created(…)` → `E` (any member call named `created`). */
export function createdEntity(expr: Expr): string | undefined {
  if (expr.kind !== 'call') return undefined;
  const callee = expr.a;
  if (!isDotMember(callee) || callee.name !== 'created') return undefined;
  const object = callee.a;
  return object?.kind === 'ident' ? object.name : undefined;
}

/** True for names that start with an upper-case ASCII letter (after any `alias/` qualifier). */
export function isPascal(name: string): boolean {
  return startsUpper(name, name.lastIndexOf('/') + 1);
}

/** True when the character at `at` (default the first) is an upper-case ASCII letter (`/^[A-Z]/`, no regex). */
export function startsUpper(name: string, at = 0): boolean {
  const code = name.charCodeAt(at);
  return code >= 65 && code <= 90;
}

/** True when the first character is a lower-case ASCII letter (`/^[a-z]/`, no regex). */
export function startsLower(name: string): boolean {
  const code = name.charCodeAt(0);
  return code >= 97 && code <= 122;
}

/** The source text of an expression, as written. */
export function sourceText(source: string, expr: Expr): string {
  return source.slice(expr.start, expr.end);
}

/** Orders strings by UTF-16 code units (fast and locale-independent, unlike `localeCompare`). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Where the field name of a member access `x.name` of `spec` starts. */
export function memberNameLocation(spec: ParsedSpec, member: Expr): SourceLocation {
  return spec.lines.location(spec.file, member.end - (member.name ?? '').length);
}

/** Where an expression or block item of `spec` starts, as a diagnostic's location. */
export function locationOf(spec: ParsedSpec, node: { readonly start: number }): SourceLocation {
  return spec.lines.location(spec.file, node.start);
}

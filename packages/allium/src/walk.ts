import type { BlockItem, Declaration, Expr } from './ast.js';

/** Calls `visit` on `expr` and every expression beneath it, parents first. Iterative, so deep input cannot overflow. */
export function walkExpr(expr: Expr, visit: (e: Expr) => void): void {
  const stack: Expr[] = [expr];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    visit(next);
    for (let i = next.kids.length - 1; i >= 0; i -= 1) {
      const kid = next.kids[i];
      if (kid !== undefined) stack.push(kid);
    }
  }
}

/** Every expression directly held by an item (not those of nested items). */
export function itemExprs(item: BlockItem): Expr[] {
  switch (item.kind) {
    case 'clause':
    case 'field':
    case 'let':
      return [item.value];
    case 'for':
      return item.filter === undefined ? [item.collection] : [item.collection, item.filter];
    case 'if':
      return item.branches.map((branch) => branch.condition);
    case 'invariant':
      return [item.body];
    default:
      return [];
  }
}

/** The items nested in a block-level `for` or `if`. */
export function nestedItems(item: BlockItem): readonly BlockItem[] {
  if (item.kind === 'for') return item.items;
  if (item.kind === 'if')
    return [...item.branches.flatMap((branch) => branch.items), ...(item.elseItems ?? [])];
  return [];
}

/** Calls `visit` on every item, descending into block-level `for`/`if` bodies. */
export function walkItems(items: readonly BlockItem[], visit: (item: BlockItem) => void): void {
  for (const item of items) {
    visit(item);
    walkItems(nestedItems(item), visit);
  }
}

/** Every expression anywhere in a declaration. */
export function declarationExprs(declaration: Declaration): Expr[] {
  switch (declaration.kind) {
    case 'block':
    case 'variant': {
      const exprs: Expr[] = [];
      walkItems(declaration.items, (item) => exprs.push(...itemExprs(item)));
      return exprs;
    }
    case 'invariant':
      return [declaration.body];
    case 'default':
      return [declaration.value];
    default:
      return [];
  }
}

/** The root name of a member chain (`a.b.c` → `a`), or `undefined` when it does not start at a name. */
export function rootName(expr: Expr): string | undefined {
  let current: Expr | undefined = expr;
  while (current?.kind === 'member') current = current.kids[0];
  return current?.kind === 'ident' ? current.name : undefined;
}

/** `x.f` with a plain name on the left → `[x, f]`. */
export function simpleMember(expr: Expr | undefined): [string, string] | undefined {
  if (expr?.kind !== 'member') return undefined;
  const object = expr.kids[0];
  if (object?.kind !== 'ident' || object.name === undefined || expr.name === undefined) return undefined;
  return [object.name, expr.name];
}

/** The name of a call's callee when it is a plain identifier (`Foo(…)` → `Foo`). */
export function calleeName(expr: Expr): string | undefined {
  if (expr.kind !== 'call') return undefined;
  const callee = expr.kids[0];
  return callee?.kind === 'ident' ? callee.name : undefined;
}

/** `E.created(…)` → `E` (any member call named `created`). */
export function createdEntity(expr: Expr): string | undefined {
  if (expr.kind !== 'call') return undefined;
  const callee = expr.kids[0];
  if (callee?.kind !== 'member' || callee.name !== 'created') return undefined;
  const object = callee.kids[0];
  return object?.kind === 'ident' ? object.name : undefined;
}

/** True for names that start with an upper-case ASCII letter (after any `alias/` qualifier). */
export function isPascal(name: string): boolean {
  const last = name.slice(name.lastIndexOf('/') + 1);
  return /^[A-Z]/.test(last);
}

/** The source text of an expression, as written. */
export function sourceText(source: string, expr: Expr): string {
  return source.slice(expr.start, expr.end);
}

/** Orders strings by UTF-16 code units (fast and locale-independent, unlike `localeCompare`). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The 1-based line and column of `offset`, counted from a known position before it (`anchor`). */
export function positionAfter(
  source: string,
  anchor: { readonly start: number; readonly line: number; readonly col: number },
  offset: number,
): { line: number; col: number } {
  let line = anchor.line;
  let lineStart = anchor.start - (anchor.col - 1);
  for (let i = source.indexOf('\n', anchor.start); i !== -1 && i < offset; i = source.indexOf('\n', i + 1)) {
    line += 1;
    lineStart = i + 1;
  }
  return { line, col: offset - lineStart + 1 };
}

/** Where the field name of a member access `x.name` starts. */
export function memberNamePosition(source: string, member: Expr): { line: number; col: number } {
  return positionAfter(source, member, member.end - (member.name ?? '').length);
}

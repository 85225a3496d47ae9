import type { Diagnostic, SourceLocation } from './diagnostic.js';
import type { LineIndex } from './line-index.js';

/**
 * The expression node kinds. Every node has the same shape ({@link Expr}); `kind` says how to read `name`, `op`
 * and `kids` (held as `a` = `kids[0]`, `b` = `kids[1]` and `rest`, the others):
 * - `ident`, `backtick`, `number`, `duration`, `string`, `bool`, `null`, `this`, `now`, `wildcard`: leaves (`name`
 *   holds the text; a qualified `alias/Name` ident keeps the slash).
 * - `member` (`kids[0].name`; `op` is `.` or `?.`), `call` (`kids[0]` callee, the rest arguments; a named
 *   argument `k: v` is an `arg` node with `name` k and `kids[0]` v).
 * - `binary` (`op` is the operator text: `=`, `!=`, `<`, `and`, `in`, `not in`, `|`, `+`, `where`, `with`,
 *   `->`, `transitions_to`, `becomes`, `when`, `??`, …), `unary` (`op` is `not`, `-`, `exists`).
 * - `set`, `list`, `object` (entries are `arg` nodes or expressions), `join` (`kids[0]` entity, then entries),
 *   `generic` (`kids[0]` base, then type arguments), `optional` (`T?`), `lambda` (`kids[0]` the body, `name` the
 *   parameter when it is a name).
 * - `binding` (`name: value` in a trigger, facing or context), `let` (`name`, `kids[0]` value),
 *   `for` (`name` the binding names joined by `,`; `kids` = collection, filter or `empty`, then body items),
 *   `if` (`kids` alternate condition, body; an odd last kid is the else body), `block` (items), `empty`, `error`.
 */
export type ExprKind =
  | 'ident'
  | 'backtick'
  | 'number'
  | 'duration'
  | 'string'
  | 'bool'
  | 'null'
  | 'this'
  | 'now'
  | 'wildcard'
  | 'member'
  | 'call'
  | 'arg'
  | 'binary'
  | 'unary'
  | 'set'
  | 'list'
  | 'object'
  | 'join'
  | 'generic'
  | 'optional'
  | 'lambda'
  | 'binding'
  | 'let'
  | 'for'
  | 'if'
  | 'block'
  | 'empty'
  | 'error';

/** The reference's operator families, as the `op` of a `binary` node spells them. */
export const COMPARISON_OPS: readonly string[] = ['=', '!=', '<', '<=', '>', '>='];
export const LOGICAL_OPS: readonly string[] = ['and', 'or', 'implies'];
export const ARITHMETIC_OPS: readonly string[] = ['+', '-', '*', '/'];
export const MEMBERSHIP_OPS: readonly string[] = ['in', 'not in'];

/**
 * An expression with its source range (for the text "as written"); its line and column are those of `start` in
 * {@link ParsedSpec.lines}.
 */
export interface Expr {
  readonly kind: ExprKind;
  readonly start: number;
  readonly end: number;
  readonly name?: string | undefined;
  readonly op?: string | undefined;
  /**
   * The first child (`kids[0]`), if any. A node holds its children without a list ({@link kidsOf} makes one, for
   * code that runs once per construct): most nodes have one or two children, and a list each was a third of the tree
   * (tools/bench/spec/README.md, twelfth pass).
   */
  readonly a: Expr | undefined;
  /** The second child (`kids[1]`), if any. */
  readonly b: Expr | undefined;
  /** The children after the second (`kids.slice(2)`): the shared empty list for most nodes. */
  readonly rest: readonly Expr[];
}

/**
 * The children of `e` in order (`kids`), as a new list (the shared empty one for a leaf): for code that runs once per
 * construct. Code that runs per node reads {@link Expr.a}, {@link Expr.b} and {@link Expr.rest}, or {@link kidCount},
 * {@link kidAt}, {@link forEachKid} and {@link findKid}, which make no list.
 */
export function kidsOf(e: Expr): readonly Expr[] {
  const { a, b, rest } = e;
  if (a === undefined) return NO_KIDS;
  if (b === undefined) return [a];
  return rest.length === 0 ? [a, b] : [a, b, ...rest];
}

/** The children of every leaf: one shared empty list instead of one per node (leaves are most of a tree). */
export const NO_KIDS: readonly Expr[] = Object.freeze([]);

/** How many children `e` has (`e.kids.length`, without making the list). */
export function kidCount(e: Expr): number {
  return e.a === undefined ? 0 : e.b === undefined ? 1 : 2 + e.rest.length;
}

/** Child `k` of `e` (`e.kids[k]`, without making the list). */
export function kidAt(e: Expr, k: number): Expr | undefined {
  return k === 0 ? e.a : k === 1 ? e.b : e.rest[k - 2];
}

/** Calls `visit` on each child of `e` in order, with its index (`e.kids.forEach`, without making the list). */
export function forEachKid(e: Expr, visit: (kid: Expr, index: number) => unknown): void {
  if (e.a === undefined) return;
  visit(e.a, 0);
  if (e.b === undefined) return;
  visit(e.b, 1);
  for (let i = 0; i < e.rest.length; i += 1) visit(e.rest[i]!, i + 2);
}

/** The first child of `e` from index `from` on that passes `test` (`e.kids.slice(from).find(test)`). */
export function findKid(e: Expr, from: number, test: (kid: Expr) => boolean): Expr | undefined {
  for (let k = from, n = kidCount(e); k < n; k += 1) {
    const kid = kidAt(e, k)!;
    if (test(kid)) return kid;
  }
  return undefined;
}

/** A range of source offsets (start inclusive, end exclusive), as the reference's spans. */
export interface Span {
  readonly start: number;
  readonly end: number;
}

/** A name with its position. */
export interface Ident {
  readonly name: string;
  readonly location: SourceLocation;
}

/** A `when status = a | b` qualifier on a field. */
export interface WhenQualifier {
  readonly field: string;
  readonly states: readonly Ident[];
}

/**
 * One item inside a declaration's braces, with its source span as the reference spans it (`start` to `end`, held on
 * the item itself: no object per item for it): a clause or field from its first token to the end of its value (the
 * keyword alone when the value is empty), a nested `for`/`if` to the end of its last item, an invariant or
 * transition graph to its closing brace.
 */
export type BlockItem = BlockItemKind & Span;

/** The kinds of {@link BlockItem}. */
export type BlockItemKind =
  | {
      readonly kind: 'clause';
      readonly keyword: string;
      readonly value: Expr;
      // Its keyword's location is that of `start` in the spec's `lines` (no location object per clause).
    }
  | {
      readonly kind: 'field';
      readonly name: Ident;
      readonly value: Expr;
      readonly when?: WhenQualifier;
      readonly params?: readonly string[];
      readonly path?: string;
    }
  | { readonly kind: 'let'; readonly name: Ident; readonly value: Expr }
  | {
      readonly kind: 'for';
      readonly bindings: readonly string[];
      readonly collection: Expr;
      readonly filter?: Expr;
      readonly items: readonly BlockItem[];
      readonly location: SourceLocation;
    }
  | {
      readonly kind: 'if';
      readonly branches: readonly { readonly condition: Expr; readonly items: readonly BlockItem[] }[];
      readonly elseItems?: readonly BlockItem[];
      readonly location: SourceLocation;
    }
  | {
      readonly kind: 'annotation';
      readonly annotation: string;
      readonly name?: Ident;
      readonly location: SourceLocation;
    }
  | { readonly kind: 'invariant'; readonly name: Ident; readonly body: Expr }
  | {
      readonly kind: 'transitions';
      readonly field: Ident;
      readonly edges: readonly { readonly from: Ident; readonly to: Ident; readonly span: Span }[];
      readonly terminal: readonly Ident[];
      readonly location: SourceLocation;
    }
  | { readonly kind: 'open-question'; readonly text: string; readonly location: SourceLocation }
  | { readonly kind: 'enum-value'; readonly name: Ident };

/** The kinds of braced declarations. */
export type BlockKind =
  | 'entity'
  | 'external entity'
  | 'value'
  | 'enum'
  | 'rule'
  | 'surface'
  | 'actor'
  | 'contract'
  | 'given'
  | 'config';

/** A top-level declaration. Every one carries the location of its first token. */
export type Declaration =
  | {
      readonly kind: 'block';
      readonly block: BlockKind;
      readonly name?: Ident;
      readonly qualifier?: string;
      readonly items: readonly BlockItem[];
      readonly location: SourceLocation;
      readonly endLine: number;
      /** From the first keyword (or qualifier) to the closing brace. */
      readonly span: Span;
    }
  | {
      readonly kind: 'variant';
      readonly name: Ident;
      /** The base entity's name; absent when the base is neither a name nor a join `Base { … }`. */
      readonly base?: Ident;
      /**
       * Whether the base is a join `Base { … }`, whatever follows it: its name is then no use of a value or enum (the
       * reference counts only a plain name there), though an entity it names is used.
       */
      readonly baseIsJoin: boolean;
      readonly items: readonly BlockItem[];
      /**
       * Whether the base is a join `Base { … }` (the `{` on the base's line): the reference reads the braces as the
       * base expression's, so no check judges the items and no name in them is a use. With the `{` on a later line
       * the items are a block's.
       */
      readonly joined: boolean;
      readonly location: SourceLocation;
      readonly endLine: number;
      /** From `variant` to the end of the last item (or of the base name), as the reference spans it. */
      readonly span: Span;
    }
  | {
      readonly kind: 'invariant';
      readonly name: Ident;
      readonly body: Expr;
      readonly location: SourceLocation;
      readonly span: Span;
    }
  | {
      readonly kind: 'default';
      /** `default Type name = …` (`alias/Type` qualified); absent in `default name = …`. */
      readonly type?: Ident;
      readonly name: Ident;
      readonly value: Expr;
      readonly location: SourceLocation;
    }
  | {
      readonly kind: 'deferred';
      readonly path: string;
      /**
       * The path's one qualified reference, as the reference reads a deferred path's expression: `alias/Name` (at the
       * qualifier), or `X.Name` (a capitalised second segment after a first word, read as an import alias's `X/Name`,
       * `member`), named `X/Name`.
       */
      readonly qualified?: Ident & { readonly member: boolean };
      readonly hint?: string;
      readonly location: SourceLocation;
      /** The source offset of the `deferred` keyword. */
      readonly start: number;
    }
  | { readonly kind: 'open-question'; readonly text: string; readonly location: SourceLocation }
  | {
      readonly kind: 'use';
      readonly path: string;
      readonly alias?: Ident;
      readonly location: SourceLocation;
      /** Where the quoted path starts (the reference reports path problems there). */
      readonly pathLocation: SourceLocation;
    };

/** An `-- allium-ignore code, code | all` directive: it silences those codes on its own line and the next. */
export interface Suppression {
  readonly codes: readonly string[];
  readonly location: SourceLocation;
}

/** The result of parsing one file: never thrown, always returned. */
export interface ParsedSpec {
  readonly file: string;
  readonly source: string;
  /** The version from the `-- allium: N` header, or `undefined` when it is missing or unreadable. */
  readonly version: number | undefined;
  readonly declarations: readonly Declaration[];
  readonly suppressions: readonly Suppression[];
  /** How many times each identifier token occurs (for the unused-declaration checks). */
  readonly nameCounts: ReadonlyMap<string, number>;
  /** Syntax and version-header diagnostics. */
  readonly diagnostics: readonly Diagnostic[];
  /** Where each line of {@link source} starts: the line and column of an expression's offsets. */
  readonly lines: LineIndex;
}

import { NO_KIDS, type Expr, type ExprKind } from './ast.js';
import type { Token } from './lexer.js';
import {
  describeToken,
  MAX_DEPTH,
  type ParserState,
  symbolOf,
  tooDeepMessage,
  UNCHECKED_LINKS,
} from './parser-state.js';
import { exprHeight, startsUpper } from './walk.js';

/**
 * Binding powers, lowest first. `where`/`with` sit above `->` so `items where p -> name` maps the filtered set. A
 * lambda's `=>` binds loosest of all and to the right, as the reference's does: its parameter is whatever precedes it
 * (`a.b => c` and `a + b => c` are lambdas too) and its body runs to the end of the expression. From comparisons up
 * the order is the reference's: `transitions_to`/`becomes`, `??`, `+`/`-`, `*`/`/`, then `|`, which binds tighter than
 * any other binary operator (`pending ?? shipped | delivered` is `pending ?? (shipped | delivered)`).
 */
export const BP = {
  lambda: 1,
  when: 2,
  arrow: 3,
  whereWith: 4,
  implies: 5,
  or: 6,
  and: 7,
  not: 8,
  compare: 9,
  transition: 10,
  coalesce: 11,
  sum: 12,
  product: 13,
  pipe: 14,
  prefix: 15,
} as const;

const INFIX: Readonly<Record<string, number>> = {
  '=>': BP.lambda,
  when: BP.when,
  '->': BP.arrow,
  where: BP.whereWith,
  with: BP.whereWith,
  implies: BP.implies,
  or: BP.or,
  and: BP.and,
  '=': BP.compare,
  '!=': BP.compare,
  '<': BP.compare,
  '<=': BP.compare,
  '>': BP.compare,
  '>=': BP.compare,
  in: BP.compare,
  'not in': BP.compare,
  transitions_to: BP.transition,
  becomes: BP.transition,
  '|': BP.pipe,
  '??': BP.coalesce,
  '+': BP.sum,
  '-': BP.sum,
  '*': BP.product,
  '/': BP.product,
};

const EXPECTED_EXPRESSION =
  "expected expression (identifier, number, string, true/false, null, if/for/not/exists, '(', '{', '[')";

/** Where a node whose last part is `last` ends (undefined, for the last consumed token, when that part is empty). */
function endOf(last: Expr | undefined): number | undefined {
  return last === undefined || last.kind === 'empty' ? undefined : last.end;
}

/**
 * A list built with `push` as a list of its own length. A pushed-to array keeps room for about 17 elements (152
 * bytes for two); the tree keeps tens of thousands of them, so its lists are copied to size once built (the
 * grown one dies young). `[first].concat(rest)` does the same for a list with a head.
 */
export function exact<T>(list: T[]): T[] {
  return list.slice();
}

/**
 * Builds a node spanning from `first` to the last consumed token, or to `end` when given: an operator's node ends
 * where its last operand does, as in the reference, whose parenthesised operand keeps its own span (the text of
 * `not (a or b)` stops before the closing parenthesis).
 */
export function node(
  p: ParserState,
  kind: ExprKind,
  first: { readonly start: number },
  kids: readonly Expr[] = NO_KIDS,
  name?: string,
  op?: string,
  end = Math.max(p.previous().end, first.start),
): Expr {
  return exprNode(
    kind,
    first.start,
    end,
    name,
    op,
    kids[0],
    kids[1],
    kids.length > 2 ? kids.slice(2) : NO_KIDS,
  );
}

/** {@link node} with one child `a` or two (`a`, `b`), as most nodes have: no list made for them. */
export function pairNode(
  p: ParserState,
  kind: ExprKind,
  first: { readonly start: number },
  a: Expr,
  b: Expr | undefined,
  name?: string,
  op?: string,
  end = Math.max(p.previous().end, first.start),
): Expr {
  return exprNode(kind, first.start, end, name, op, a, b, NO_KIDS);
}

/** {@link node} with the children `head` then `tail` (a call's callee, then its arguments), not joined first. */
export function headNode(
  p: ParserState,
  kind: ExprKind,
  first: { readonly start: number },
  head: Expr,
  tail: readonly Expr[],
): Expr {
  const end = Math.max(p.previous().end, first.start);
  return exprNode(
    kind,
    first.start,
    end,
    undefined,
    undefined,
    head,
    tail[0],
    tail.length > 1 ? tail.slice(1) : NO_KIDS,
  );
}

/**
 * Every expression node, built by one object literal. V8 pretenures by allocation site, which an object literal has
 * (with the two node classes before it, `--trace-pretenuring` showed no site of the nodes' size, so they were all
 * allocated young and copied by every collection): nearly every node lives as long as the tree,
 * so once the first collection has seen this literal's nodes survive, V8's optimised code allocates them straight in
 * the old generation, and the collections that follow no longer copy them twice (into the survivor space, then out
 * of it). At 50k lines the scavenges went from 45–50 to 34–42 ms (tools/bench/spec/README.md, thirteenth pass).
 * All nodes have the same eight fields, leaves too: one shape for every read of a node, which made the checks
 * faster than the four-field leaves of a second class saved (and a second literal for leaves, tried, is tenured
 * later and collected more).
 */
function exprNode(
  kind: ExprKind,
  start: number,
  end: number,
  name: string | undefined,
  op: string | undefined,
  a: Expr | undefined,
  b: Expr | undefined,
  rest: readonly Expr[],
): Expr {
  return { kind, start, end, name, op, a, b, rest };
}

/**
 * Parses an expression whose operators bind tighter than `minBp` (Pratt parsing). Returns `undefined` after
 * reporting a syntax error.
 */
export function parseExpr(p: ParserState, minBp = 0): Expr | undefined {
  if (!p.enter()) return undefined;
  // The outermost expression is measured when it may be deeper than MAX_DEPTH (see UNCHECKED_LINKS).
  const outermost = p.exprLevel === 0;
  const first = p.current;
  const links = p.links;
  const depth = p.depth;
  if (outermost) p.peak = depth;
  p.exprLevel += 1;
  try {
    const expr = parseExprAt(p, minBp);
    if (
      outermost &&
      expr !== undefined &&
      (p.links - links > UNCHECKED_LINKS || p.peak - depth > UNCHECKED_LINKS) &&
      exprHeight(expr, MAX_DEPTH) > MAX_DEPTH
    ) {
      p.errorAt(first, tooDeepMessage(MAX_DEPTH));
      return undefined;
    }
    return expr;
  } finally {
    p.exprLevel -= 1;
    p.leave();
  }
}

function parseExprAt(p: ParserState, minBp: number): Expr | undefined {
  const from = p.pos;
  let left = parsePrefix(p, minBp);
  if (left === undefined) return undefined;
  // Each operator of a left-leaning chain (`a and b and c …`) deepens the tree by one level, and counts against
  // MAX_DEPTH (the parser itself goes no deeper: the chain is this loop).
  let chain = 0;
  for (;;) {
    const op = infixOperator(p);
    if (op === undefined) return left;
    const bp = INFIX[op.text] ?? 0;
    if (bp <= minBp) return left;
    chain += 1;
    p.links += 1;
    if (p.depth + chain >= MAX_DEPTH) {
      p.tooDeep(MAX_DEPTH);
      return undefined;
    }
    if (op.text === '=>' && left.kind === 'ident') {
      // A lambda's parameter (`x => …`, `(x) => …`) names no declaration, as in the reference.
      p.drop(from);
    }
    for (let i = 0; i < op.width; i += 1) p.advance();
    if (op.text === '=>') {
      // Right-associative: the body takes everything after it, another lambda included.
      const body = parseExpr(p, BP.lambda - 1);
      if (body === undefined) return undefined;
      // A plain (or qualified) name is the parameter the body binds; any other expression binds nothing the checks
      // read (the reference keeps it, and reads only the body), so only its span remains.
      const name = left.kind === 'ident' ? left.name : undefined;
      left = pairNode(p, 'lambda', left, body, undefined, name, undefined, endOf(body));
      continue;
    }
    if (op.text === '->') {
      // `items -> name` projects a field (or, in a signature, names a return type): one name, which the reference
      // reads as a field, not as a use of a declaration; what follows it (`?`, `<T>`, `.f`) applies to the whole.
      const rightAt = p.pos;
      const field = p.expectWord('projection field');
      if (field === undefined) return undefined;
      p.drop(rightAt);
      const right = node(p, 'ident', p.previous(), NO_KIDS, field);
      const projected = parsePostfix(
        p,
        pairNode(p, 'binary', left, left, right, undefined, op.text, right.end),
      );
      if (projected === undefined) return undefined;
      left = projected;
      continue;
    }
    const right = parseExpr(p, bp);
    if (right === undefined) return undefined;
    left = pairNode(p, 'binary', left, left, right, undefined, op.text, right.end);
  }
}

function infixOperator(p: ParserState): { text: string; width: number } | undefined {
  const token = p.current;
  if (token.kind !== 'punct' && token.kind !== 'keyword') return undefined;
  if (token.text === 'not' && p.at('in', 1)) return { text: 'not in', width: 2 };
  return INFIX[token.text] === undefined ? undefined : { text: token.text, width: 1 };
}

/**
 * The operand's first name takes an `alias/Name` qualifier only where a `/` could follow it as an infix operator, as
 * in the reference, which forms a qualified name in its infix loop: not as the right operand of `*`, `/` or `|`
 * (`a | core/X` is `(a | core) / X` to it, `session/auth/User` is `(session / auth) / User`), nor right after a
 * prefix operator (see `ParserState.prefixOperand`).
 */
function parsePrefix(p: ParserState, minBp: number): Expr | undefined {
  const token = p.current;
  const qualify = minBp < BP.product && !p.prefixOperand;
  p.prefixOperand = false;
  const primary = parsePrimary(p, token, qualify);
  if (primary === undefined) return undefined;
  return parsePostfix(p, primary);
}

function parsePrimary(p: ParserState, token: Token, qualify: boolean): Expr | undefined {
  if (token.kind === 'keyword') return parseKeywordPrimary(p, token, qualify);
  switch (token.kind) {
    case 'ident':
      return parseName(p, token, qualify);
    case 'number':
    case 'duration':
    case 'string':
    case 'backtick':
      p.advance();
      return node(p, token.kind, token, NO_KIDS, token.text);
    case 'punct':
      return parsePunctPrimary(p, token);
    default:
      p.errorHere(`${EXPECTED_EXPRESSION}, found ${describeToken(token)}`);
      return undefined;
  }
}

function parseKeywordPrimary(p: ParserState, token: Token, qualify: boolean): Expr | undefined {
  switch (token.text) {
    case 'true':
    case 'false':
      p.advance();
      return node(p, 'bool', token, NO_KIDS, token.text);
    case 'null':
    case 'this':
    case 'now':
      p.advance();
      return node(p, token.text, token, NO_KIDS, token.text);
    case 'not':
      // `not exists X` is one prefix operator in the reference, with a node of its own (not a `not` of an `exists`):
      // its operand binds as a prefix operator's, and what follows it belongs to the enclosing expression
      // (`not exists x = y` compares `not exists x` with `y`); the model and the plan tell it from a `not`. It always
      // wants an operand: `exists` is a name there only after no `not` (before a closing token, the operand's parse
      // fails with the usual error).
      if (p.peek(1).kind === 'keyword' && p.peek(1).text === 'exists') {
        p.advance();
        return parseUnary(p, token, 'not exists', BP.prefix);
      }
      return parseUnary(p, token, 'not', BP.not);
    case 'exists':
      return endsOperand(p) ? parseName(p, token, qualify) : parseUnary(p, token, 'exists', BP.prefix);
    case 'if':
      return parseIfExpr(p);
    case 'for':
      return parseForExpr(p);
    default:
      return parseName(p, token, qualify);
  }
}

/** True when the token after this one closes a list or the input: `exists` there is a plain name (as in the reference). */
function endsOperand(p: ParserState): boolean {
  const next = p.peek(1);
  return next.kind === 'eof' || (next.kind === 'punct' && [')', ',', ']', '}'].includes(next.text));
}

function parseUnary(p: ParserState, token: Token, op: string, bp: number): Expr | undefined {
  const operand = parsePrefixOperand(p, bp);
  return operand === undefined
    ? undefined
    : pairNode(p, 'unary', token, operand, undefined, undefined, op, operand.end);
}

/** Consumes a prefix operator and parses its operand, whose first name takes no qualifier (see `prefixOperand`). */
function parsePrefixOperand(p: ParserState, bp: number): Expr | undefined {
  p.advance();
  p.prefixOperand = true;
  const operand = parseExpr(p, bp);
  p.prefixOperand = false;
  return operand;
}

/**
 * `-x` as the reference builds it: the subtraction `0 - x`, its `0` spanning the minus sign. So every check, the model
 * and the plan read a negation as they read any arithmetic: a field `b: -a` is a derived value, `-config.x` is a
 * config reference, `-f(x)` calls `f`.
 */
function parseNegation(p: ParserState, token: Token): Expr | undefined {
  const operand = parsePrefixOperand(p, BP.prefix);
  if (operand === undefined) return undefined;
  const zero = exprNode('number', token.start, token.end, '0', undefined, undefined, undefined, NO_KIDS);
  return exprNode('binary', token.start, operand.end, undefined, '-', zero, operand, NO_KIDS);
}

/** A word that makes `alias/word` a qualified name. */
function qualifies(word: Token): boolean {
  return startsUpper(word.text) || word.text === 'config' || word.text === 'entity' || word.text === 'value';
}

/**
 * An identifier or a qualified `alias/Name` (a lambda `x => body` is an infix operator). As the reference reads a
 * slash after a plain name: a capitalised word or `config`, `entity`, `value` after it makes one qualified name
 * (`core/Order`, `core/config`); anything else is a division (`a/b`, and `core/Order/X` divides the qualified name
 * by `X`). Not so where `qualify` is false (see {@link parsePrefix}): there the slash is a division too.
 */
function parseName(p: ParserState, token: Token, qualify = true): Expr {
  p.advance();
  let name = token.text;
  if (qualify && p.symbol() === '/' && p.atWord(1) && qualifies(p.peek(1))) {
    // The alias is no use of a declaration named so (`Order/Items` does not use `entity Order`).
    p.dropLabel();
    p.advance();
    name += `/${p.advance().text}`;
  }
  return node(p, 'ident', token, NO_KIDS, name);
}

function parsePunctPrimary(p: ParserState, token: Token): Expr | undefined {
  switch (token.text) {
    case '(':
      return parseParenthesised(p);
    case '{':
      return parseCollection(p, token, 'set', '}');
    case '[':
      return parseCollection(p, token, 'list', ']');
    case '-':
      return parseNegation(p, token);
    case '*':
      p.advance();
      return node(p, 'wildcard', token, NO_KIDS, '*');
    default:
      p.errorHere(`${EXPECTED_EXPRESSION}, found ${describeToken(token)}`);
      return undefined;
  }
}

/**
 * `( expr )`, or a contract signature's parameter list: `()` is an empty block, `(name: Type, …)` is a block of
 * `binding` nodes (a single parameter is the binding itself), so `-> Return` then attaches as a projection.
 */
function parseParenthesised(p: ParserState): Expr | undefined {
  const open = p.advance();
  if (p.at(')')) {
    p.advance();
    return node(p, 'block', open);
  }
  if (p.atWord() && p.at(':', 1)) return parseSignatureParameters(p, open);
  const inner = parseExpr(p);
  if (inner === undefined) return undefined;
  return p.expect(')') === undefined ? undefined : inner;
}

function parseSignatureParameters(p: ParserState, open: Token): Expr | undefined {
  const parameters: Expr[] = [];
  while (!p.at(')') && !p.atEof()) {
    const name = p.current;
    if (p.expectWord('parameter name') === undefined) return undefined;
    p.dropLabel();
    if (p.expect(':') === undefined) return undefined;
    const type = parseExpr(p);
    if (type === undefined) return undefined;
    parameters.push(pairNode(p, 'binding', name, type, undefined, name.text));
    p.eat(',');
  }
  if (p.expect(')') === undefined) return undefined;
  // The list ends where its last parameter does, as the reference's span does: the `)` is not in it.
  const last = parameters[parameters.length - 1];
  return parameters.length === 1 || last === undefined
    ? last
    : node(p, 'block', open, parameters, undefined, undefined, last.end);
}

/**
 * `{a, b}` (set), `{k: v, …}` (object: every entry `name: value`, as soon as the first is) or `[a, b]` (list), as
 * the reference reads them; commas are optional between entries, and the closing bracket must follow.
 */
function parseCollection(p: ParserState, open: Token, kind: ExprKind, close: string): Expr | undefined {
  p.advance();
  const object = kind === 'set' && p.atWord() && p.at(':', 1);
  const entries: Expr[] = [];
  while (!p.at(close) && !p.atEof()) {
    let entry: Expr | undefined;
    if (object) {
      const nameToken = p.current;
      const name = p.expectWord('field name');
      if (name === undefined) return undefined;
      p.dropLabel();
      if (p.expect(':') === undefined) return undefined;
      const value = parseExpr(p);
      entry =
        value === undefined
          ? undefined
          : pairNode(p, 'arg', nameToken, value, undefined, name, undefined, value.end);
    } else entry = parseExpr(p);
    if (entry === undefined) return undefined;
    entries.push(entry);
    p.eat(',');
  }
  if (p.expect(close) === undefined) return undefined;
  return node(p, object ? 'object' : kind, open, exact(entries));
}

/** A call's arguments up to `close` (consumed): `name: value` becomes an `arg` node, anything else is positional. */
export function parseEntries(p: ParserState, close: string): Expr[] | undefined {
  const entries: Expr[] = [];
  while (!p.at(close)) {
    if (p.atEof()) {
      p.errorHere(`expected '${close}', found end of file`);
      return undefined;
    }
    const entry = parseEntry(p);
    if (entry === undefined) return undefined;
    entries.push(entry);
    p.eat(',');
  }
  p.advance();
  return entries;
}

function parseEntry(p: ParserState): Expr | undefined {
  if (p.atWord() && p.at(':', 1)) {
    const nameToken = p.advance();
    p.dropLabel();
    p.advance();
    const value = parseExpr(p);
    return value === undefined ? undefined : pairNode(p, 'arg', nameToken, value, undefined, nameToken.text);
  }
  return parseExpr(p);
}

function parsePostfix(p: ParserState, base: Expr): Expr | undefined {
  let current = base;
  // Each link of a chain (`x.a.b`, `f(x)(y)`, `x?`) deepens the tree by one level, as each operator of a left-leaning
  // chain does (parseExprAt), and counts against the same limit, MAX_DEPTH: then no walk of the tree meets a chain
  // longer than it has stack for (a member chain of 5,000 links overflowed the plan's stack, a chain of calls the
  // checks').
  let chain = 0;
  for (;;) {
    const token = p.current;
    const symbol = symbolOf(token);
    if (!continuesChain(p, token, symbol)) return current;
    chain += 1;
    p.links += 1;
    if (p.depth + chain >= MAX_DEPTH) {
      p.tooDeep(MAX_DEPTH);
      return undefined;
    }
    let next: Expr | undefined;
    switch (symbol) {
      case '.':
      case '?.':
        next = parseMember(p, current);
        break;
      case '(':
        next = parseCall(p, current);
        break;
      case '{':
        next = parseJoin(p, current);
        break;
      case '<':
        next = parseGeneric(p, current);
        break;
      default:
        p.advance();
        next = pairNode(p, 'optional', current, current, undefined);
    }
    if (next === undefined) return undefined;
    current = next;
  }
}

/** Whether `token` adds a link to the postfix chain before it (see {@link parsePostfix}). */
function continuesChain(p: ParserState, token: Token, symbol: string | undefined): boolean {
  switch (symbol) {
    case '.':
    case '?.':
    case '?':
    // As in the reference, a `(` on the next line still calls what precedes it.
    case '(':
      return true;
    // A join's `{` is on the line of what it joins.
    case '{':
      return token.line === p.previous().line;
    // A `<` right after a word, with no space between, opens type arguments (`Set<T>`, and so `n<3` too), as in the
    // reference.
    case '<': {
      const previous = p.previous();
      return token.start === previous.end && isWord(previous);
    }
    default:
      return false;
  }
}

function parseMember(p: ParserState, object: Expr): Expr | undefined {
  const op = p.advance().text;
  const field = p.expectWord('field name');
  if (field === undefined) return undefined;
  // A member's name is no use of a declaration named so (`x.Status` does not use `enum Status`).
  p.dropLabel();
  return pairNode(p, 'member', object, object, undefined, field, op);
}

function parseCall(p: ParserState, callee: Expr): Expr | undefined {
  p.advance();
  const args = parseEntries(p, ')');
  return args === undefined ? undefined : headNode(p, 'call', callee, callee, args);
}

/**
 * `E{field, field: value, …}` (after any expression, with the `{` on its line, as in the reference): each entry a
 * field name, with an optional `: value`; the closing `}` must follow.
 */
function parseJoin(p: ParserState, entity: Expr): Expr | undefined {
  p.advance();
  const kids: Expr[] = [entity];
  while (!p.at('}') && !p.atEof()) {
    const nameToken = p.current;
    const field = p.expectWord('join field name');
    if (field === undefined) return undefined;
    p.dropLabel();
    if (p.eat(':') === undefined) kids.push(node(p, 'ident', nameToken, NO_KIDS, field));
    else {
      const value = parseExpr(p);
      if (value === undefined) return undefined;
      kids.push(pairNode(p, 'arg', nameToken, value, undefined, field, undefined, value.end));
    }
    p.eat(',');
  }
  if (p.expect('}') === undefined) return undefined;
  return node(p, 'join', entity, exact(kids));
}

function parseGeneric(p: ParserState, base: Expr): Expr | undefined {
  p.advance();
  const args: Expr[] = [];
  while (!p.at('>') && !p.atEof()) {
    // Above comparisons, so the closing `>` is no operator.
    const arg = parseExpr(p, BP.compare);
    if (arg === undefined) return undefined;
    args.push(arg);
    p.eat(',');
  }
  if (p.expect('>') === undefined) return undefined;
  return headNode(p, 'generic', base, base, args);
}

function isWord(token: Token): boolean {
  return token.kind === 'ident' || token.kind === 'keyword';
}

/** `if c: a [else if c: b] [else: d]` inside an expression; bodies are expressions or indented blocks. */
function parseIfExpr(p: ParserState): Expr | undefined {
  const first = p.advance();
  const kids: Expr[] = [];
  // The line a branch's body is judged against: the `if`'s, then each `else`'s.
  let ownerLine = first.line;
  for (;;) {
    const condition = parseExpr(p);
    if (condition === undefined || p.expect(':') === undefined) return undefined;
    const body = parseBody(p, ownerLine);
    if (body === undefined) return undefined;
    kids.push(condition, body);
    if (!p.at('else')) break;
    const elseToken = p.advance();
    ownerLine = elseToken.line;
    if (p.eat('if') !== undefined) continue;
    if (p.expect(':') === undefined) return undefined;
    const elseBody = parseBody(p, ownerLine);
    if (elseBody === undefined) return undefined;
    kids.push(elseBody);
    break;
  }
  return node(p, 'if', first, exact(kids), undefined, undefined, endOf(kids[kids.length - 1]));
}

/** `for x in c [where f]: body` (also `for (k, v) in …`). */
function parseForExpr(p: ParserState): Expr | undefined {
  const first = p.advance();
  const bindings = parseForBindings(p);
  if (bindings === undefined || p.expect('in') === undefined) return undefined;
  const collection = parseExpr(p, BP.whereWith);
  if (collection === undefined) return undefined;
  let filter: Expr = node(p, 'empty', p.current);
  if (p.eat('where') !== undefined) {
    const parsed = parseExpr(p);
    if (parsed === undefined) return undefined;
    filter = parsed;
  }
  if (p.expect(':') === undefined) return undefined;
  const body = parseBody(p, first.line);
  if (body === undefined) return undefined;
  return node(p, 'for', first, [collection, filter, body], bindings.join(','), undefined, endOf(body));
}

/** The binding names after `for`: `x` or `(k, v)`. */
export function parseForBindings(p: ParserState): string[] | undefined {
  if (p.eat('(') === undefined) {
    const name = p.expectWord('loop variable');
    if (name === undefined) return undefined;
    p.dropLabel();
    return [name];
  }
  // One name or more, separated by commas, as the reference reads them: `()` and a trailing comma are errors.
  const names: string[] = [];
  do {
    const name = p.expectWord('loop variable');
    if (name === undefined) return undefined;
    p.dropLabel();
    names.push(name);
  } while (p.eat(',') !== undefined);
  return p.expect(')') === undefined ? undefined : names;
}

/**
 * The body after `:` in an `if`/`for`: the rest of the line, or else a block of the lines from the next token's
 * column on. As in the reference that column need not be deeper than the keyword's: an empty body takes the next
 * line (`requires: …`, even the next `rule`) for its own, and the error comes where that stops parsing.
 */
function parseBody(p: ParserState, ownerLine: number): Expr | undefined {
  const next = p.current;
  if (next.line === ownerLine) return parseExpr(p);
  return parseIndentedBlock(p, next.col);
}

/**
 * Collects expressions (and `let` bindings) while tokens start at a column ≥ `baseCol`; one item gives itself,
 * several give a `block`. As the reference, an item that fails to parse ends the block and the items before it are
 * kept (a broken expression also skips one more token); with `partial: false` the whole block fails instead.
 */
export function parseIndentedBlock(p: ParserState, baseCol: number, partial = true): Expr | undefined {
  const first = p.current;
  const items: Expr[] = [];
  while (!p.atEof() && !p.at('}') && p.current.col >= baseCol) {
    const isLet = p.at('let');
    const before = p.pos;
    const item = isLet ? parseLetExpr(p) : parseExpr(p);
    if (item === undefined) {
      if (!partial) return undefined;
      if (!isLet) p.advance();
      p.drop(before);
      break;
    }
    items.push(item);
  }
  if (items.length === 1 && items[0] !== undefined) return items[0];
  // When the first item fails, the block spans its first token, as the reference's empty block does.
  const end = items.length === 0 ? first.end : endOf(items[items.length - 1]);
  return node(p, 'block', first, exact(items), undefined, undefined, end);
}

export function parseLetExpr(p: ParserState): Expr | undefined {
  const first = p.advance();
  const name = p.expectWord('binding name');
  if (name === undefined) return undefined;
  p.dropLabel();
  if (p.expect('=') === undefined) return undefined;
  const value = parseExpr(p);
  return value === undefined
    ? undefined
    : pairNode(p, 'let', first, value, undefined, name, undefined, endOf(value));
}

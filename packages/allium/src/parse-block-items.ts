import {
  forEachKid,
  NO_KIDS,
  type BlockItem,
  type BlockItemKind,
  type BlockKind,
  type Expr,
  type Ident,
  type Span,
  type WhenQualifier,
} from './ast.js';
import type { Token } from './lexer.js';
import {
  BP,
  exact,
  node,
  pairNode,
  parseExpr,
  parseForBindings,
  parseIndentedBlock,
  parseLetExpr,
} from './parse-expression.js';
import { describeToken, type ParserState, symbolOf } from './parser-state.js';
import { startsLower } from './walk.js';

/** Clause keywords: `kw: value` items that are not fields. */
export const CLAUSE_KEYWORDS = new Set([
  'when',
  'requires',
  'ensures',
  'exposes',
  'provides',
  'related',
  'timeout',
  'contracts',
  'identified_by',
  'within',
  'facing',
  'context',
]);

const DECLARATION_STARTERS = new Set([
  'entity',
  'external',
  'value',
  'enum',
  'rule',
  'surface',
  'actor',
  'contract',
]);

const EXPECTED_ITEM =
  'expected block item (name: value, let name = value, when:/requires:/ensures: clause, for ... in ...:, or open question)';

/**
 * Parses items until the closing `}` (not consumed) or the end of the file. A failed item skips one token and
 * carries on, so one broken line never hides the rest of the block. As the reference, a declaration keyword is no
 * way out of a block whose `}` went missing: it is a broken item like any other, and the block runs on to the next
 * `}` (the caller drops a block the end of the file leaves open).
 */
export function parseBlockItems(p: ParserState, block: BlockKind | 'variant'): BlockItem[] {
  const items: BlockItem[] = [];
  while (!p.at('}') && !p.atEof()) {
    const before = p.pos;
    const item = block === 'enum' ? parseEnumValue(p) : parseBlockItem(p, block === 'rule');
    if (item === undefined) {
      // As the reference: a failed item always skips one more token (so a clause right after a broken
      // `for … in` line is lost with it); a failed enum value skips only itself.
      if (p.pos === before || block !== 'enum') p.advance();
      p.drop(before);
      continue;
    }
    items.push(item);
    // Commas may separate items, not enum values (the reference reports a comma there).
    if (block !== 'enum') p.eat(',');
  }
  return exact(items);
}

/** True at a top-level declaration keyword in column 1 (ends the indented body of a block-level `for`/`if`). */
export function startsDeclaration(p: ParserState): boolean {
  const token = p.current;
  return token.col === 1 && token.kind === 'keyword' && DECLARATION_STARTERS.has(token.text) && p.atWord(1);
}

function parseEnumValue(p: ParserState): BlockItem | undefined {
  if (p.eat('|') !== undefined) return undefined;
  const token = p.current;
  if (token.kind === 'backtick' || p.atWord()) {
    // An enum value is a label, not a use of a declaration with the same name.
    const at = p.pos;
    p.advance();
    p.drop(at);
    const name = token.kind === 'backtick' ? token.text.replace(/^`|`$/g, '') : token.text;
    return {
      kind: 'enum-value',
      name: { name, location: p.location(token) },
      start: token.start,
      end: token.end,
    };
  }
  p.errorHere(`expected enum variant, found ${describeToken(token)}`);
  return undefined;
}

/**
 * Parses one item; returns `undefined` after reporting an error. `ruleItem`: a rule's own item, where the legacy
 * `produces:`/`consumes:` clauses are recognised (elsewhere, nested bodies included, they read as fields, as in the
 * reference).
 */
export function parseBlockItem(p: ParserState, ruleItem = false): BlockItem | undefined {
  if (!p.enter()) return undefined;
  try {
    const first = p.current;
    const item = parseBlockItemAt(p, ruleItem);
    if (item === undefined || 'start' in item) return item;
    return { ...item, start: first.start, end: Math.max(first.end, p.previous().end) };
  } finally {
    p.leave();
  }
}

/** Where a `keyword: value` item ends: with its value, or its keyword when the value is empty. */
function valueEnd(first: Token, value: Expr): number {
  return value.kind === 'empty' ? first.end : value.end;
}

/** Where a nested `for`/`if` ends: with its last item, or its keyword when it has none. */
function lastItemEnd(first: Token, items: readonly BlockItem[]): number {
  return items.at(-1)?.end ?? first.end;
}

function parseBlockItemAt(p: ParserState, ruleItem: boolean): BlockItemKind | BlockItem | undefined {
  const token = p.current;
  switch (symbolOf(token)) {
    case 'let':
      return parseLetItem(p);
    case 'for':
      return parseForItem(p);
    case 'if':
      return parseIfItem(p);
    case '@':
      return parseAnnotation(p);
    case 'invariant':
      if (p.atWord(1) && !p.at(':', 2)) return parseInvariantItem(p);
      break;
    case 'open':
      if (p.at('question', 1)) return parseOpenQuestionItem(p);
      break;
    case 'transitions':
      if (p.atWord(1) && p.at('{', 2)) return parseTransitions(p);
      break;
    default:
      break;
  }
  // The colon forms the language replaced with annotations are reported, then read as clauses (as the reference).
  if (token.kind === 'ident' && (token.text === 'guidance' || token.text === 'guarantee') && p.at(':', 1))
    p.errorHere(
      `\`${token.text}:\` syntax was replaced by \`@${token.text}\`. Use \`@${token.text}\` followed by indented comment lines.`,
    );
  if (p.at('invariant') && p.at(':', 1))
    p.errorHere(
      '`invariant:` syntax was replaced by `@invariant`. Use `@invariant Name` followed by indented comment lines.',
    );
  if (p.atWord()) {
    const word = token.text;
    if ((word === 'facing' || word === 'context') && p.atWord(1) && p.at(':', 2))
      return parseBindingClause(p);
    if (p.at('.', 1) && p.atWord(2) && p.at(':', 3)) return parsePathField(p);
    // `name(params): value`; without the colon after the parentheses the reference reads `name(` as `name:` (the
    // `(` taken for the colon), so `Done(a: b)` on its own line is a field `Done` whose value is `a`.
    if (p.at('(', 1)) return hasColonAfterParens(p) ? parseParamField(p) : parseClauseOrField(p);
    if (ruleItem && (word === 'produces' || word === 'consumes') && p.at(':', 1)) return parseLegacyClause(p);
    if (p.at(':', 1)) return parseClauseOrField(p);
  }
  p.errorHere(`${EXPECTED_ITEM}, found ${describeToken(token)}`);
  return undefined;
}

function parseLetItem(p: ParserState): BlockItemKind | BlockItem | undefined {
  const letToken = p.advance();
  const name = p.expectIdent('binding name');
  if (name === undefined) return undefined;
  p.dropLabel();
  if (p.expect('=') === undefined) return undefined;
  const value = parseClauseValue(p, letToken.line, letToken.col, false);
  return value === undefined
    ? undefined
    : { kind: 'let', name, value, start: letToken.start, end: valueEnd(letToken, value) };
}

/**
 * A clause value: on the keyword's line it is one expression; starting on a later line at a deeper column it is
 * an indented block. `name: value` at the start is a binding when `allowBinding` (trigger and context clauses).
 */
export function parseClauseValue(
  p: ParserState,
  ownerLine: number,
  ownerCol: number,
  allowBinding: boolean,
): Expr | undefined {
  const next = p.current;
  // `name: value` binds, on the keyword's line, or on the next line when the value starts on that line too (so a
  // bare `when:` followed by `ensures: X` reads as the binding `ensures` of `X`, as in the reference).
  if (allowBinding && p.atWord() && p.at(':', 1)) {
    const after = p.peek(2);
    if (next.line === ownerLine || (after.kind !== 'eof' && after.line === next.line)) {
      p.advance();
      p.dropLabel();
      p.advance();
      const inner = parseClauseValue(p, ownerLine, ownerCol, false);
      return inner === undefined ? undefined : pairNode(p, 'binding', next, inner, undefined, next.text);
    }
  }
  if (next.line === ownerLine) return parseExpr(p);
  if (next.kind === 'eof' || next.col <= ownerCol) return node(p, 'empty', next);
  // An indented `}` too: the block is empty and spans it, as the reference's does.
  return parseIndentedBlock(p, next.col);
}

function parseClauseOrField(p: ParserState): BlockItemKind | BlockItem | undefined {
  const nameToken = p.advance();
  // An item's own name is no use of a declaration named so (`Payout: x`).
  p.dropLabel();
  p.advance();
  const keyword = nameToken.text;
  if (keyword === 'contracts') return parseContracts(p, nameToken);
  const isClause = CLAUSE_KEYWORDS.has(keyword);
  const value = parseClauseValue(p, nameToken.line, nameToken.col, keyword === 'when');
  if (value === undefined) return undefined;
  const start = nameToken.start;
  const end = valueEnd(nameToken, value);
  if (isClause) return { kind: 'clause', keyword, value, start, end };
  const name: Ident = { name: keyword, location: p.location(nameToken) };
  const split = splitWhenQualifier(p, value);
  if (split === undefined) return { kind: 'field', name, value, start, end };
  return { kind: 'field', name, value: split.value, when: split.when, start, end };
}

/**
 * `String when status = a | b` → the type and the qualifier. As the reference: only plain names count as states
 * (`alias/Name`, `x.y` and literals are skipped), and without any (`when status = done.d`) the item is no qualified
 * field but a field whose value is the whole `when` expression.
 */
function splitWhenQualifier(p: ParserState, value: Expr): { value: Expr; when: WhenQualifier } | undefined {
  if (value.kind !== 'binary' || value.op !== 'when') return undefined;
  const inner = value.a;
  const condition = value.b;
  if (inner === undefined || condition?.kind !== 'binary' || condition.op !== '=') return undefined;
  const field = condition.a;
  const states = condition.b;
  if (field?.kind !== 'ident' || field.name?.includes('/') !== false || states === undefined)
    return undefined;
  const idents: Ident[] = [];
  collectPipe(states, (leaf) => {
    if (leaf.kind === 'ident' && leaf.name !== undefined && !leaf.name.includes('/')) {
      idents.push({ name: leaf.name, location: p.locationAt(leaf.start) });
    }
  });
  if (idents.length === 0) return undefined;
  // The qualifier's names, the field's and every state's, are no uses (`when status = open | Order` does not use
  // `entity Order`), as in the reference.
  p.dropSpan(condition.start, condition.end);
  return { value: inner, when: { field: field.name, states: idents } };
}

/** Calls `visit` on each leaf of an `a | b | c` chain. */
export function collectPipe(expr: Expr, visit: (leaf: Expr) => void): void {
  if (expr.kind === 'binary' && expr.op === '|') {
    forEachKid(expr, (kid) => collectPipe(kid, visit));
    return;
  }
  visit(expr);
}

/**
 * `contracts:` entries as the reference reads them, each `demands Name` or `fulfils Name` (`alias/Name` for an
 * imported contract) on lines deeper than the keyword: an unknown direction is reported and skipped with the word
 * after it; no entry at all fails the clause. The value is a block of the contract names (`alias/Name` qualified).
 */
function parseContracts(p: ParserState, keyword: Token): BlockItemKind | BlockItem | undefined {
  const entries: Expr[] = [];
  while (!p.atEof() && !p.at('}') && p.current.col > keyword.col && p.atWord()) {
    const direction = p.advance();
    if (direction.text !== 'demands' && direction.text !== 'fulfils') {
      p.errorAt(
        direction,
        `Unknown direction '${direction.text}' in contracts clause. Use \`demands\` or \`fulfils\`.`,
      );
      if (p.atWord()) p.advance();
      continue;
    }
    const first = p.expectIdent('contract name');
    if (first === undefined) return undefined;
    let entry = node(p, 'ident', p.previous(), NO_KIDS, first.name);
    if (p.at('/')) {
      p.advance();
      const nameToken = p.current;
      const name = p.expectIdent("contract name after '/'");
      if (name === undefined) return undefined;
      entry = node(p, 'ident', nameToken, NO_KIDS, `${first.name}/${name.name}`);
    }
    if (p.at('{')) {
      p.errorHere(
        'Inline contract blocks are not allowed in `contracts:`. Declare the contract at module level.',
      );
      return undefined;
    }
    entries.push(entry);
  }
  if (entries.length === 0) {
    p.errorAt(keyword, 'Empty `contracts:` clause. Add at least one `demands` or `fulfils` entry.');
    return undefined;
  }
  const last = entries[entries.length - 1]!;
  const value = node(p, 'block', entries[0]!, exact(entries), undefined, undefined, last.end);
  return {
    kind: 'clause',
    keyword: 'contracts',
    value,
    start: keyword.start,
    end: last.end,
  };
}

/**
 * `facing name: Type` / `context name: Type`: the type is a clause value (so a line break right after the colon
 * leaves it empty when the next line is no deeper, as the reference reads `context region:` before `exposes:`).
 */
function parseBindingClause(p: ParserState): BlockItemKind | BlockItem | undefined {
  const keyword = p.advance();
  const name = p.advance();
  p.dropLabel();
  p.advance();
  const type = parseClauseValue(p, keyword.line, keyword.col, false);
  if (type === undefined) return undefined;
  const empty = type.kind === 'empty';
  const value = pairNode(
    p,
    'binding',
    name,
    type,
    undefined,
    name.text,
    undefined,
    empty ? name.end : type.end,
  );
  const end = empty ? keyword.end : type.end;
  return { kind: 'clause', keyword: keyword.text, value, start: keyword.start, end };
}

function parsePathField(p: ParserState): BlockItemKind | BlockItem | undefined {
  const from = p.pos;
  const owner = p.advance();
  p.advance();
  const field = p.advance();
  // The path names nothing the reference counts as a use (`Payout.amount: x` does not use `entity Payout`).
  p.drop(from);
  p.advance();
  const value = parseClauseValue(p, owner.line, owner.col, false);
  if (value === undefined) return undefined;
  const name = { name: field.text, location: p.location(field) };
  return { kind: 'field', name, value, path: owner.text, start: owner.start, end: valueEnd(owner, value) };
}

function hasColonAfterParens(p: ParserState): boolean {
  let depth = 0;
  for (let i = 1; ; i += 1) {
    const token = p.peek(i);
    if (token.kind === 'eof') return false;
    if (token.text === '(') depth += 1;
    else if (token.text === ')') {
      depth -= 1;
      if (depth === 0) return p.at(':', i + 1);
    }
  }
}

function parseParamField(p: ParserState): BlockItemKind | BlockItem | undefined {
  const nameToken = p.advance();
  p.advance();
  // Names separated by commas, as the reference reads them: `(a b)` and `(a: T)` want a `)` after `a`, and `(a,)` a
  // name after the comma.
  const params: string[] = [];
  if (!p.at(')'))
    for (;;) {
      const param = p.expectIdent('parameter name');
      if (param === undefined) return undefined;
      p.dropLabel();
      params.push(param.name);
      if (p.eat(',') === undefined) break;
    }
  if (p.expect(')') === undefined || p.expect(':') === undefined) return undefined;
  const value = parseClauseValue(p, nameToken.line, nameToken.col, false);
  if (value === undefined) return undefined;
  const name = { name: nameToken.text, location: p.location(nameToken) };
  return { kind: 'field', name, value, params, start: nameToken.start, end: valueEnd(nameToken, value) };
}

function parseLegacyClause(p: ParserState): BlockItemKind | BlockItem | undefined {
  const keyword = p.advance();
  p.advance();
  while (!p.atEof() && !p.at('}') && p.current.line === keyword.line) p.advance();
  p.report(
    keyword,
    'warning',
    null,
    `\`${keyword.text}:\` clauses are removed in v3; use \`when\` clauses on entity fields instead`,
  );
  // As the reference: the clause is dropped and the next item parsed in its place (no token skipped for it).
  return parseBlockItem(p, true);
}

function parseForItem(p: ParserState): BlockItemKind | BlockItem | undefined {
  const forToken = p.advance();
  const bindings = parseForBindings(p);
  if (bindings === undefined || p.expect('in') === undefined) return undefined;
  const collection = parseExpr(p, BP.whereWith);
  if (collection === undefined) return undefined;
  let filter: Expr | undefined;
  if (p.eat('where') !== undefined) {
    filter = parseExpr(p);
    if (filter === undefined) return undefined;
  }
  if (p.expect(':') === undefined) return undefined;
  const items = parseNestedItems(p, forToken.line);
  const location = p.location(forToken);
  return {
    kind: 'for',
    bindings,
    collection,
    ...(filter === undefined ? {} : { filter }),
    items,
    location,
    start: forToken.start,
    end: lastItemEnd(forToken, items),
  };
}

/** The body of a block-level `for`/`if`: one item on the same line, or the indented items below. */
function parseNestedItems(p: ParserState, ownerLine: number): BlockItem[] {
  if (p.current.line === ownerLine) {
    const item = parseBlockItem(p);
    return item === undefined ? [] : [item];
  }
  const baseCol = p.current.col;
  const items: BlockItem[] = [];
  while (!p.atEof() && !p.at('}') && p.current.col >= baseCol && !startsDeclaration(p)) {
    const before = p.pos;
    const item = parseBlockItem(p);
    if (item === undefined) {
      p.advance();
      p.drop(before);
      break;
    }
    items.push(item);
  }
  return exact(items);
}

function parseIfItem(p: ParserState): BlockItemKind | BlockItem | undefined {
  const ifToken = p.advance();
  const branches: { condition: Expr; items: BlockItem[] }[] = [];
  let elseItems: BlockItem[] | undefined;
  let condition = parseExpr(p);
  // A branch's items are on its keyword's line or start on a later one: the line of `if`, or of `else` (as the
  // reference has it, not that of the `:`, which a condition running over lines puts further down).
  let keywordLine = ifToken.line;
  for (;;) {
    if (condition === undefined || p.expect(':') === undefined) return undefined;
    branches.push({ condition, items: parseNestedItems(p, keywordLine) });
    if (!p.at('else')) break;
    keywordLine = p.advance().line;
    if (p.eat('if') !== undefined) {
      condition = parseExpr(p);
      continue;
    }
    if (p.expect(':') === undefined) return undefined;
    elseItems = parseNestedItems(p, keywordLine);
    break;
  }
  const location = p.location(ifToken);
  const last = elseItems ?? branches.at(-1)?.items ?? [];
  return {
    kind: 'if',
    branches,
    ...(elseItems === undefined ? {} : { elseItems }),
    location,
    start: ifToken.start,
    end: lastItemEnd(ifToken, last),
  };
}

function parseAnnotation(p: ParserState): BlockItemKind | BlockItem | undefined {
  const at = p.advance();
  const keywordToken = p.current;
  if (!p.atWord()) {
    p.errorHere(`expected annotation keyword after \`@\`, found ${describeToken(p.current)}`);
    return undefined;
  }
  const keyword = p.expectIdent('annotation keyword');
  if (keyword === undefined) return undefined;
  const location = p.location(at);
  let name: Ident | undefined;
  let header = keywordToken;
  if (keyword.name === 'guidance') {
    if (p.atWord() && p.current.line === keywordToken.line) {
      p.errorHere('`@guidance` does not take a name. Remove the name after `@guidance`.');
      return undefined;
    }
  } else if (keyword.name === 'invariant' || keyword.name === 'guarantee') {
    header = p.current;
    name = p.expectLabel('annotation name');
    if (name === undefined) return undefined;
    if (startsLower(name.name)) p.errorAlways(header, 'Annotation names must be PascalCase.');
  } else {
    // At the unknown word, as the reference reports it.
    p.errorAt(
      keywordToken,
      `Unknown annotation \`@${keyword.name}\`. Use \`@invariant\`, \`@guidance\` or \`@guarantee\`.`,
    );
    return undefined;
  }
  if (!hasCommentBody(p.source, at.col - 1, header.start)) {
    // A failed item: its block then skips one more token (the reference's recovery), often the closing brace.
    p.errorAt(header, 'Annotations must be followed by at least one indented comment line.');
    return undefined;
  }
  return name === undefined
    ? { kind: 'annotation', annotation: keyword.name, location }
    : { kind: 'annotation', annotation: keyword.name, name, location };
}

/**
 * Whether the lines after the one holding offset `headerAt` start an annotation body as the reference reads it:
 * blank lines, then at least one line indented deeper than `atIndent` (the `@`'s column, 0-based) holding `-- text`
 * or a bare `--`; any other line first ends the search. (From the header's offset, not its line number: counting
 * lines from the top made every annotation cost the length of the file before it.)
 */
function hasCommentBody(source: string, atIndent: number, headerAt: number): boolean {
  const headerEnd = source.indexOf('\n', headerAt);
  let start = headerEnd === -1 ? -1 : headerEnd + 1;
  while (start !== -1 && start < source.length) {
    const next = source.indexOf('\n', start);
    const end = next === -1 ? source.length : next;
    const line = source.slice(start, source.charCodeAt(end - 1) === 13 ? end - 1 : end);
    const trimmed = line.trimStart();
    if (trimmed !== '') {
      if (line.length - trimmed.length <= atIndent) return false;
      return trimmed.startsWith('-- ') || trimmed === '--';
    }
    start = next === -1 ? -1 : next + 1;
  }
  return false;
}

function parseInvariantItem(p: ParserState): BlockItemKind | BlockItem | undefined {
  p.advance();
  const nameToken = p.current;
  const name = p.expectLabel('invariant name');
  if (name === undefined) return undefined;
  if (startsLower(name.name)) p.errorAlways(nameToken, 'invariant name must start with an uppercase letter');
  const body = parseBracedBody(p);
  return body === undefined ? undefined : { kind: 'invariant', name, body };
}

/**
 * `{ expr… }` as used by invariants, as the reference reads it: expressions (and `let`s) up to the `}`, one giving
 * itself, several a block from the first to the last. An expression that fails ends the body (one more token
 * skipped); the `}` must follow. An empty body is a block spanning the `}` (its text, as the reference's, is `}`).
 */
export function parseBracedBody(p: ParserState): Expr | undefined {
  if (p.expect('{') === undefined) return undefined;
  const first = p.current;
  const items: Expr[] = [];
  while (!p.at('}') && !p.atEof()) {
    if (p.at('let')) {
      const item = parseLetExpr(p);
      if (item === undefined) return undefined;
      items.push(item);
      continue;
    }
    const before = p.pos;
    const item = parseExpr(p);
    if (item === undefined) {
      p.advance();
      p.drop(before);
      break;
    }
    items.push(item);
  }
  const end = items.length === 0 ? first.end : items[items.length - 1]!.end;
  if (p.expect('}') === undefined) return undefined;
  if (items.length === 1) return items[0];
  return node(p, 'block', first, exact(items), undefined, undefined, end);
}

function parseOpenQuestionItem(p: ParserState): BlockItemKind | BlockItem | undefined {
  const open = p.advance();
  p.advance();
  const text = p.current;
  if (text.kind !== 'string') {
    p.errorHere(`expected string, found ${describeToken(text)}`);
    return undefined;
  }
  p.advance();
  return { kind: 'open-question', text: unquote(text.text), location: p.location(open) };
}

/** The text of a string token without its quotes and escapes. */
export function unquote(text: string): string {
  return text.replace(/^"|"$/g, '').replace(/\\(.)/g, '$1');
}

/**
 * `transitions field { from -> to, …, terminal: a, b }`. As the reference: a missing `->` loses the rest of its
 * line and the graph goes on; a missing state name fails the whole item (the block's recovery takes over).
 */
function parseTransitions(p: ParserState): BlockItemKind | BlockItem | undefined {
  const from = p.pos;
  const keyword = p.advance();
  const field = p.expectIdent('transition field name');
  if (field === undefined) return undefined;
  p.advance();
  const edges: { from: Ident; to: Ident; span: Span }[] = [];
  const terminal: Ident[] = [];
  while (!p.at('}') && !p.atEof()) {
    if (p.at('terminal') && p.at(':', 1)) {
      p.advance();
      p.advance();
      do {
        const state = p.expectIdent('terminal state');
        if (state === undefined) return undefined;
        terminal.push(state);
      } while (p.eat(',') !== undefined && !p.at('}'));
      continue;
    }
    const first = p.current;
    const source = p.expectIdent('source state');
    if (source === undefined) return undefined;
    if (p.expect('->') === undefined) {
      skipRestOfLine(p);
      continue;
    }
    const target = p.expectIdent('target state');
    if (target === undefined) return undefined;
    edges.push({ from: source, to: target, span: { start: first.start, end: p.previous().end } });
    p.eat(',');
  }
  if (p.expect('}') === undefined) return undefined;
  // The graph's words are states, not uses of declarations (the reference does not read them as uses).
  p.drop(from);
  return { kind: 'transitions', field, edges, terminal, location: p.location(keyword) };
}

/** Skips at least one token, then the rest of its line, stopping before a `}`. */
function skipRestOfLine(p: ParserState): void {
  while (!p.at('}') && !p.atEof()) {
    const line = p.advance().line;
    if (p.current.line !== line) return;
  }
}

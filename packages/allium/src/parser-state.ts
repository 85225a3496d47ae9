import type { Ident } from './ast.js';
import type { Diagnostic, SourceLocation } from './diagnostic.js';
import type { Lexer, Token } from './lexer.js';
import type { LineIndex } from './line-index.js';
import { startsUpper } from './walk.js';

/**
 * The parser's cursor over the token list plus its diagnostics. A syntax error right after an error on the same
 * line is left out (it is a consequence of that one), which is also what the reference parser shows.
 */
/**
 * How deeply expressions and nested items may nest (parentheses, brackets, a call's arguments, `if`/`for` bodies):
 * each level is a call of this recursive parser. Deeper input is reported as a syntax error instead of overflowing
 * its stack; real specs nest a few levels.
 */
export const MAX_NESTING = 256;

/**
 * How deep an expression's tree may be. A chain (`a | b | c …`, `x or y or …`, `x.a.b…`, `f(x)(y)…`) is read in a
 * loop, a level of the tree per link and none of the parser, so its links count against this rather than
 * {@link MAX_NESTING}: an inline enum of 300 values is a valid spec (the reference reads chains of 20,000). The whole
 * tree is held to it too, chains inside chains included (`parseExpr` measures an expression with more than
 * {@link UNCHECKED_LINKS} links or levels of nesting), so that no walk of it by the checks, the model or the plan
 * needs more stack than Node gives: the first of them to overflow did at about 3,000 levels (docs/spec.md).
 */
export const MAX_DEPTH = 1024;

/**
 * An expression with at most this many chain links and levels of nesting is not measured: no construct adds more
 * than three levels of tree per level of nesting (`if` → block → `let`), nor more than one per link, so it is at most
 * 3 × 64 + 64 + 1 = 257 levels deep, about a quarter of {@link MAX_DEPTH}. Real specs' expressions stay well under it, and the measuring
 * walk runs on the few that do not.
 */
export const UNCHECKED_LINKS = 64;

export class ParserState {
  pos = 0;
  /**
   * The token at {@link pos} (the eof token past the end): what `peek()` returns, kept in a field and moved with
   * {@link pos}, so the parser reads the token in front of it as a field instead of computing it again. It asks for
   * that token four times per token on average (675,000 times at 50k lines), mostly from code that has not been
   * optimised, where each `peek()` was a call and four property reads.
   */
  current: Token;
  /** Current nesting of expressions and items (see {@link MAX_NESTING}). */
  depth = 0;
  /**
   * Chain links read so far, the deepest nesting reached since the outermost open `parseExpr` began, and how many
   * `parseExpr` calls are open (see {@link MAX_DEPTH}).
   */
  links = 0;
  peak = 0;
  exprLevel = 0;
  readonly diagnostics: Diagnostic[] = [];
  /**
   * Set by a prefix operator (`not`, `exists`, `-`) for its operand's first name, which then takes no `alias/Name`
   * qualifier: the reference forms a qualified name as an infix `/` that binds less tightly than a prefix operator, so
   * `exists core/Order{…}` is `(exists core) / Order{…}` to it.
   */
  prefixOperand = false;
  /**
   * The tokens lexed and not yet dropped from this list: `tokens[i]` is the token at position `base + i`, and those
   * before index {@link live} are released already. {@link settle} releases the tokens before its position and
   * removes the released ones from the list once they are at least half of it, so a big spec's tokens never all live
   * at once and each token is moved a bounded number of times, however far ahead the parser has looked.
   */
  private readonly tokens: Token[] = [];
  /** The position of `tokens[0]`. */
  private base = 0;
  /** The index in {@link tokens} of the first token not released yet. */
  private live = 0;
  /**
   * Tokens that ended up in no construct: consumed by an item or declaration that failed to parse, or skipped while
   * recovering. The reference reads uses from its syntax tree, so names there do not count as uses. One byte per
   * token of {@link tokens}, at the same index, grown as tokens are lexed.
   */
  private dropped = new Uint8Array(1024);
  private eof: Token | undefined;
  /**
   * The line of the last diagnostic when it is an error (else 0): a syntax error on that same line is a consequence
   * of it and is left out, as the reference does (it looks at its last diagnostic only).
   */
  private lastErrorLine = 0;

  /** Where each line of the source starts, as the lexer meets them (see {@link locationAt}). */
  readonly lines: LineIndex;

  constructor(
    private readonly lexer: Lexer,
    readonly source: string,
    readonly file: string,
  ) {
    this.lines = lexer.lines;
    this.current = this.lexUpTo(0);
  }

  /**
   * Marks the tokens from index `from` up to the current position as dropped: their words no longer count as uses
   * (see {@link nameCounts}). Everything dropped lies after the last {@link settle}, so those tokens still exist.
   * Besides what failed to parse, the words the reference does not read as uses are dropped where they are parsed:
   * enum values, annotation and invariant names, a `use` alias, a `deferred` path, a transitions graph, the name
   * after `->`, and capitalised labels and bindings ({@link dropLabel}).
   */
  drop(from: number): void {
    this.dropIndexes(from - this.base, this.pos - this.base);
  }

  /** Drops `tokens[from]` up to (not including) `tokens[to]`, those not released yet. */
  private dropIndexes(from: number, to: number): void {
    for (let i = Math.max(from, this.live); i < to; i += 1) {
      const token = this.tokens[i];
      if (this.dropped[i] === 1 || token === undefined) continue;
      this.dropped[i] = 1;
      if (token.kind === 'ident' || token.kind === 'keyword') this.lexer.uncount(token.text);
    }
  }

  /**
   * {@link drop} for the tokens that start in `[start, end)` of the source, all consumed since the last {@link settle}:
   * for a construct the reference reads no uses from, recognised only once it is parsed (a field's `when` qualifier).
   */
  dropSpan(start: number, end: number): void {
    let from = this.pos - this.base;
    while (from > this.live && (this.tokens[from - 1] as Token).start >= start) from -= 1;
    let to = from;
    while (to < this.pos - this.base && (this.tokens[to] as Token).start < end) to += 1;
    this.dropIndexes(from, to);
  }

  /**
   * Takes back the word just consumed when it is capitalised: a name that labels or binds something rather than
   * naming a declaration (an item's name, a member, a named argument, an object literal's key, a join's field, a
   * contract or field parameter, an import alias before `/`; a `let`, loop, trigger, `facing` or `context` binding)
   * is no use of a declaration named so, as in the reference, whose uses are the capitalised names of its tree
   * outside those places (`Created(Order: o)` does not use `entity Order`; a later `Order` that reads the binding
   * does).
   */
  dropLabel(): void {
    if (startsUpper(this.previous().text)) this.drop(this.pos - 1);
  }

  /**
   * How often each word (identifier or keyword) occurs, leaving out the {@link drop}ped tokens. The reference reads
   * uses from its syntax tree, so names in a construct that failed to parse, or were skipped while recovering, do
   * not count. Complete once the whole input is parsed.
   */
  nameCounts(): Map<string, number> {
    return this.lexer.wordCounts();
  }

  /**
   * Releases the tokens consumed so far (all but the last, which {@link previous} may still read), so that a big
   * spec's tokens never all live at once. Callers settle between declarations, holding no token; `atEnd` releases
   * every token. The released tokens go back to the lexer, which writes later tokens into them.
   */
  settle(atEnd = false): void {
    const length = this.tokens.length;
    const cut = atEnd ? length : this.pos - 1 - this.base;
    if (cut <= this.live) return;
    this.lexer.recycle(this.tokens, this.live, cut);
    this.live = cut;
    // Removing the released tokens at every settle moves the whole list each time: after a look-ahead to the end of
    // the file (an unclosed parenthesis), that made a byte-flipped 0.5 MB spec take 8 s. Halves keep it linear.
    if (cut * 2 < length) return;
    this.tokens.copyWithin(0, cut);
    this.tokens.length = length - cut;
    this.dropped.copyWithin(0, cut, length);
    this.dropped.fill(0, length - cut, length);
    this.base += cut;
    this.live = 0;
  }

  /**
   * Enters one level of nesting; `false` (after reporting an error) when that would exceed {@link MAX_NESTING}, in
   * which case the caller gives up on the construct without calling {@link leave}.
   */
  enter(extra = 0): boolean {
    if (this.depth + extra >= MAX_NESTING) {
      this.tooDeep();
      return false;
    }
    this.depth += 1;
    if (this.depth > this.peak) this.peak = this.depth;
    return true;
  }

  /**
   * Reports nesting beyond {@link MAX_NESTING} (or a chain beyond {@link MAX_DEPTH}) and skips the rest of the line (so
   * recovery stays linear).
   */
  tooDeep(limit = MAX_NESTING): void {
    this.errorHere(tooDeepMessage(limit));
    const line = this.current.line;
    while (this.current.kind !== 'eof' && this.current.line === line) this.step();
  }

  /** Leaves a level entered with {@link enter}. */
  leave(): void {
    this.depth -= 1;
  }

  /** The token `offset` places ahead (the eof token past the end); {@link current} for the token at {@link pos}. */
  peek(offset = 0): Token {
    if (offset === 0) return this.current;
    const index = this.pos + offset;
    return this.tokens[index - this.base] ?? this.lexUpTo(index);
  }

  /** Moves {@link pos} to the next token, and {@link current} with it. */
  private step(): void {
    const index = this.pos + 1;
    this.pos = index;
    this.current = this.tokens[index - this.base] ?? this.lexUpTo(index);
  }

  /** Lexes tokens until index `index` exists (or the input ends) and returns the token there (or eof). */
  private lexUpTo(index: number): Token {
    while (this.eof === undefined && this.base + this.tokens.length <= index) {
      const token = this.lexer.next();
      if (this.tokens.length >= this.dropped.length) {
        const grown = new Uint8Array(this.dropped.length * 2);
        grown.set(this.dropped);
        this.dropped = grown;
      }
      this.tokens.push(token);
      if (token.kind === 'eof') this.eof = token;
    }
    const token = this.tokens[index - this.base] ?? this.eof;
    if (token === undefined) throw new RangeError(`token ${index} was already released`);
    return token;
  }

  /** The most recently consumed token (the first token when nothing was consumed). */
  previous(): Token {
    return this.tokens[this.pos - 1 - this.base] ?? this.current;
  }

  /** Consumes and returns the current token; never moves past eof. */
  advance(): Token {
    const token = this.current;
    if (token.kind !== 'eof') this.step();
    return token;
  }

  atEof(): boolean {
    return this.current.kind === 'eof';
  }

  /** True when the current token is punctuation or a keyword with exactly this text. */
  at(text: string, offset = 0): boolean {
    return symbolOf(offset === 0 ? this.current : this.peek(offset)) === text;
  }

  /**
   * The text of the token `offset` places ahead when it is punctuation or a keyword (what {@link at} compares),
   * else `undefined`: one look at the token where a parser choosing among many would call {@link at} for each.
   */
  symbol(offset = 0): string | undefined {
    return symbolOf(offset === 0 ? this.current : this.peek(offset));
  }

  /** True when the current token is a word (identifier or keyword). */
  atWord(offset = 0): boolean {
    const kind = (offset === 0 ? this.current : this.peek(offset)).kind;
    return kind === 'ident' || kind === 'keyword';
  }

  /** Consumes the token when it has this text. */
  eat(text: string): Token | undefined {
    return symbolOf(this.current) === text ? this.advance() : undefined;
  }

  /** Consumes the expected token or reports `expected 'x', found …` and returns `undefined`. */
  expect(text: string): Token | undefined {
    const token = this.eat(text);
    if (token === undefined) this.errorHere(`expected '${text}', found ${describeToken(this.current)}`);
    return token;
  }

  /**
   * {@link expectIdent} for a name that labels or declares something rather than naming a declaration: the
   * reference does not read it as a use (an annotation or invariant name, a `use` alias, a `deferred` path), so
   * its word is taken back as a {@link drop}ped token's is.
   */
  expectLabel(what: string): Ident | undefined {
    const from = this.pos;
    const ident = this.expectIdent(what);
    if (ident !== undefined) this.drop(from);
    return ident;
  }

  /** Consumes a word and returns it as an identifier, or reports an error naming `what`. */
  expectIdent(what: string): Ident | undefined {
    const token = this.expectWordToken(what);
    return token === undefined ? undefined : { name: token.text, location: this.location(token) };
  }

  /**
   * {@link expectIdent} for a word whose text is all the tree keeps (a member's field name, a named argument, a loop
   * or `let` binding): no identifier and location made only to be dropped. Besides the garbage, the dropped ones
   * kept V8 from pretenuring the kept ones (the names of declarations and fields): with them, V8's pretenuring trace
   * showed two large allocation sites whose objects survived 37% and 63% of the time, under the 85% at which V8
   * tenures a site; without them, 90–97% (tools/bench/spec/README.md, thirteenth pass).
   */
  expectWord(what: string): string | undefined {
    return this.expectWordToken(what)?.text;
  }

  private expectWordToken(what: string): Token | undefined {
    if (this.atWord()) return this.advance();
    this.errorHere(`expected ${what}, found ${describeToken(this.current)}`);
    return undefined;
  }

  location(token: Token): SourceLocation {
    return { file: this.file, line: token.line, col: token.col };
  }

  /** The location of a source offset (an expression's `start`). */
  locationAt(offset: number): SourceLocation {
    return this.lines.location(this.file, offset);
  }

  /** Takes a diagnostic reported before parsing began (the version marker's) as the last one. */
  afterHeader(diagnostics: readonly Diagnostic[]): void {
    const last = diagnostics[diagnostics.length - 1];
    this.lastErrorLine = last?.severity === 'error' ? last.location.line : 0;
  }

  /** Reports a syntax error at the current token. */
  errorHere(message: string): void {
    this.errorAt(this.current, message);
  }

  /** Reports a syntax error at `token`, unless this line already has one. */
  errorAt(token: Token, message: string): void {
    if (this.lastErrorLine === token.line) return;
    this.lastErrorLine = token.line;
    this.diagnostics.push({ code: null, severity: 'error', message, location: this.location(token) });
  }

  /**
   * Reports an error at `token` even when its line has one already, as the reference reports a malformed name (it
   * counts for the lines after it: a later syntax error on that line is then left out).
   */
  errorAlways(token: Token, message: string): void {
    this.lastErrorLine = token.line;
    this.diagnostics.push({ code: null, severity: 'error', message, location: this.location(token) });
  }

  /** Reports a non-syntax diagnostic found while parsing (migration warnings). */
  report(token: Token, severity: Diagnostic['severity'], code: string | null, message: string): void {
    this.lastErrorLine = severity === 'error' ? token.line : 0;
    this.diagnostics.push({ code, severity, message, location: this.location(token) });
  }
}

/** The syntax error for input nested or chained past `limit` levels. */
export function tooDeepMessage(limit: number): string {
  return `nested too deeply (more than ${limit} levels)`;
}

/** A token's text when it is punctuation or a keyword, else `undefined` (see {@link ParserState.symbol}). */
export function symbolOf(token: Token): string | undefined {
  return token.kind === 'punct' || token.kind === 'keyword' ? token.text : undefined;
}

/**
 * Words the reference's lexer makes keywords that ours keeps as names (the parser reads them where they mean
 * something: an actor's `within`, a rule's legacy `produces:`/`consumes:`); an error names them as keywords.
 */
const LEXED_AS_KEYWORDS: ReadonlySet<string> = new Set(['within', 'produces', 'consumes']);

/**
 * How an error message names a token: `identifier`, `'requires'`, `'.'`, `string`, `duration` (`2.days`),
 * `end of file`.
 */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'ident':
      return LEXED_AS_KEYWORDS.has(token.text) ? `'${token.text}'` : 'identifier';
    case 'keyword':
    case 'punct':
      return `'${token.text}'`;
    case 'number':
      return 'number';
    case 'duration':
      return 'duration';
    case 'string':
      return 'string';
    case 'backtick':
      return 'backtick literal';
    case 'eof':
      return 'end of file';
    case 'unknown':
      return 'unrecognised token';
  }
}

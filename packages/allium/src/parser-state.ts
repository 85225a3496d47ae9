import type { Ident } from './ast.js';
import type { Diagnostic, SourceLocation } from './diagnostic.js';
import type { Token } from './lexer.js';

/**
 * The parser's cursor over the token list plus its diagnostics. Syntax errors are reported at most once per source
 * line (later errors on a line are consequences of the first), which is also what the reference parser shows.
 */
/**
 * How deeply expressions and nested items may nest (parentheses, calls, operator chains, `if`/`for` bodies). Deeper
 * input is reported as a syntax error instead of overflowing the stack of this parser or of the checks that walk
 * the tree; real specs nest a few levels.
 */
export const MAX_NESTING = 256;

export class ParserState {
  pos = 0;
  /** Current nesting of expressions and items (see {@link MAX_NESTING}). */
  depth = 0;
  readonly diagnostics: Diagnostic[] = [];
  /**
   * Tokens that ended up in no construct: consumed by an item or declaration that failed to parse, or skipped while
   * recovering. The reference reads uses from its syntax tree, so names there do not count as uses.
   */
  readonly dropped: Uint8Array;
  private readonly errorLines = new Set<number>();
  private readonly eof: Token;

  constructor(
    readonly tokens: readonly Token[],
    readonly source: string,
    readonly file: string,
  ) {
    const last = tokens[tokens.length - 1];
    if (last === undefined) throw new RangeError('token list must end with an eof token');
    this.eof = last;
    this.dropped = new Uint8Array(tokens.length);
  }

  /** Marks the tokens from index `from` up to the current position as {@link dropped}. */
  drop(from: number): void {
    this.dropped.fill(1, from, this.pos);
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
    return true;
  }

  /** Reports nesting beyond {@link MAX_NESTING} and skips the rest of the line (so recovery stays linear). */
  tooDeep(): void {
    this.errorHere(`nested too deeply (more than ${MAX_NESTING} levels)`);
    const line = this.peek().line;
    while (!this.atEof() && this.peek().line === line) this.pos += 1;
  }

  /** Leaves a level entered with {@link enter}. */
  leave(): void {
    this.depth -= 1;
  }

  /** The token `offset` places ahead (the eof token past the end). */
  peek(offset = 0): Token {
    return this.tokens[this.pos + offset] ?? this.eof;
  }

  /** The most recently consumed token (the first token when nothing was consumed). */
  previous(): Token {
    return this.tokens[this.pos - 1] ?? this.peek();
  }

  /** Consumes and returns the current token; never moves past eof. */
  advance(): Token {
    const token = this.peek();
    if (token.kind !== 'eof') this.pos += 1;
    return token;
  }

  atEof(): boolean {
    return this.peek().kind === 'eof';
  }

  /** True when the current token is punctuation or a keyword with exactly this text. */
  at(text: string, offset = 0): boolean {
    const token = this.peek(offset);
    return (token.kind === 'punct' || token.kind === 'keyword') && token.text === text;
  }

  /** True when the current token is a word (identifier or keyword). */
  atWord(offset = 0): boolean {
    const kind = this.peek(offset).kind;
    return kind === 'ident' || kind === 'keyword';
  }

  /** Consumes the token when it has this text. */
  eat(text: string): Token | undefined {
    return this.at(text) ? this.advance() : undefined;
  }

  /** Consumes the expected token or reports `expected 'x', found …` and returns `undefined`. */
  expect(text: string): Token | undefined {
    const token = this.eat(text);
    if (token === undefined) this.errorHere(`expected '${text}', found ${describeToken(this.peek())}`);
    return token;
  }

  /** Consumes a word and returns it as an identifier, or reports an error naming `what`. */
  expectIdent(what: string): Ident | undefined {
    if (!this.atWord()) {
      this.errorHere(`expected ${what}, found ${describeToken(this.peek())}`);
      return undefined;
    }
    const token = this.advance();
    return { name: token.text, location: this.location(token) };
  }

  location(token: Token): SourceLocation {
    return { file: this.file, line: token.line, col: token.col };
  }

  /** Reports a syntax error at the current token. */
  errorHere(message: string): void {
    this.errorAt(this.peek(), message);
  }

  /** Reports a syntax error at `token`, unless this line already has one. */
  errorAt(token: Token, message: string): void {
    if (this.errorLines.has(token.line)) return;
    this.errorLines.add(token.line);
    this.diagnostics.push({ code: null, severity: 'error', message, location: this.location(token) });
  }

  /** Reports a non-syntax diagnostic found while parsing (migration warnings). */
  report(token: Token, severity: Diagnostic['severity'], code: string | null, message: string): void {
    this.diagnostics.push({ code, severity, message, location: this.location(token) });
  }
}

/** How an error message names a token: `identifier`, `'requires'`, `'.'`, `string`, `end of file`. */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'ident':
      return 'identifier';
    case 'keyword':
    case 'punct':
      return `'${token.text}'`;
    case 'number':
    case 'duration':
      return 'number';
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

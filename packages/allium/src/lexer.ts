import { LineIndex, utf8Extra } from './line-index.js';

/** What a token is. Words that the grammar treats specially are `keyword`; everything else is an identifier. */
export type TokenKind =
  'ident' | 'keyword' | 'number' | 'duration' | 'string' | 'backtick' | 'punct' | 'unknown' | 'eof';

/** One lexed token with its byte range and 1-based position. */
export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly col: number;
}

/** The lexer's own tokens: the fields of a recycled token are written again (see {@link Lexer.recycle}). */
class LexedToken implements Token {
  constructor(
    public kind: TokenKind,
    public text: string,
    public start: number,
    public end: number,
    public line: number,
    public col: number,
  ) {}
}

/** A `--` comment with its position (the lexer keeps the `allium-ignore` directives: see {@link Lexer.directives}). */
export interface Comment {
  readonly text: string;
  readonly line: number;
  readonly col: number;
}

/** The lexer's output: tokens (ending with one `eof`) and the comments that may be `allium-ignore` directives. */
export interface LexResult {
  readonly tokens: Token[];
  readonly directives: Comment[];
}

const KEYWORDS = new Set([
  'entity',
  'external',
  'value',
  'enum',
  'rule',
  'surface',
  'actor',
  'contract',
  'given',
  'config',
  'invariant',
  'variant',
  'default',
  'deferred',
  'open',
  'question',
  'use',
  'as',
  'when',
  'requires',
  'ensures',
  'let',
  'for',
  'in',
  'if',
  'else',
  'where',
  'with',
  'not',
  'and',
  'or',
  'implies',
  'exists',
  'transitions_to',
  'becomes',
  'transitions',
  'terminal',
  'true',
  'false',
  'null',
  'this',
  'now',
]);

const DURATION_UNITS = new Set([
  'second',
  'seconds',
  'minute',
  'minutes',
  'hour',
  'hours',
  'day',
  'days',
  'week',
  'weeks',
  'month',
  'months',
  'year',
  'years',
]);

const TWO_CHAR_PUNCT = ['!=', '<=', '>=', '=>', '->', '??', '?.'];
const ONE_CHAR_PUNCT = '{}()[]:,.=<>+-*/|?@';
/** Punctuation by character code: one shared string per punctuation, two-character ones by their first code. */
const PUNCT_TEXT: (string | undefined)[] = [];
for (const p of ONE_CHAR_PUNCT) PUNCT_TEXT[p.charCodeAt(0)] = p;
const TWO_CHAR_BY_FIRST: (string[] | undefined)[] = [];
for (const p of TWO_CHAR_PUNCT) (TWO_CHAR_BY_FIRST[p.charCodeAt(0)] ??= []).push(p);

/** True when `text` is a reserved word of the grammar. */
export function isKeyword(text: string): boolean {
  return KEYWORDS.has(text);
}

const isIdentStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdentPart = (c: number): boolean => isIdentStart(c) || (c >= 48 && c <= 57);
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/**
 * Splits Allium source into tokens. Never throws: a character the language does not know becomes an `unknown`
 * token, an unterminated string ends at the end of its line. Linear in the input size.
 */
export function lex(source: string): LexResult {
  const lexer = new Lexer(source);
  const tokens: Token[] = [];
  for (;;) {
    const token = lexer.next();
    tokens.push(token);
    if (token.kind === 'eof') break;
  }
  return { tokens, directives: lexer.directives };
}

/**
 * The lexer as a cursor: {@link Lexer.next} returns one token at a time (then `eof` forever), collecting comments
 * on the way. The parser pulls tokens as it needs them, so a big spec's tokens never all live at
 * once (see `ParserState`).
 */
export class Lexer {
  /**
   * The comments that start as an `-- allium-ignore` directive does (`--`, any white space, `allium-ignore`), which
   * `parseSpec` reads its suppressions from; other comments are skipped, not kept (a big spec has tens of thousands,
   * each an object and a string that lived as long as the parse).
   */
  readonly directives: Comment[] = [];
  /** Where each line lexed so far starts (complete once `eof` is lexed). */
  readonly lines = new LineIndex();
  private line = 1;
  private lineStart = 0;
  /**
   * How many more UTF-8 bytes than UTF-16 units the current line holds before {@link i}: columns count bytes, as the
   * reference's do (see LineIndex). Characters outside ASCII occur in strings, backtick literals and unrecognised
   * tokens (and comments, which end their line).
   */
  private lineExtra = 0;
  private i = 0;
  private readonly n: number;
  // Words repeat a lot (field, rule and entity names): one string per distinct word, not one per occurrence, and
  // one counter per distinct word (see wordCounts).
  private words = new Map<string, number>();
  private readonly wordTexts: string[] = [];
  private readonly counts: number[] = [];
  /** Tokens handed back with {@link recycle}, to be written over instead of allocating new ones. */
  private readonly spare: LexedToken[] = [];

  constructor(private readonly source: string) {
    this.n = source.length;
  }

  /**
   * Hands back tokens the caller holds no reference to any more: {@link next} writes later tokens into them. A
   * parser releasing each declaration's tokens then lexes a whole spec with about as many token objects as its
   * longest declaration has tokens, instead of one per token (121 for the 162,064 tokens of a 50k-line spec).
   */
  recycle(tokens: readonly Token[], from: number, to: number): void {
    for (let i = from; i < to; i += 1) {
      const token = tokens[i];
      if (token instanceof LexedToken && token.kind !== 'eof') this.spare.push(token);
    }
  }

  /** Takes back one occurrence of a word lexed so far (a token the parser dropped: see `ParserState.drop`). */
  uncount(word: string): void {
    const id = this.words.get(word);
    if (id !== undefined) this.counts[id] = (this.counts[id] ?? 0) - 1;
  }

  /**
   * How often each word (identifier or keyword) was lexed, less those taken back with {@link uncount}: the lexer's
   * own word table, turned into the counts (a big spec has thousands of distinct words: no second table of them). So
   * it is called once, when lexing is over (`parseSpec` calls it after the end of the input); the lexer interns no
   * word after that.
   */
  wordCounts(): Map<string, number> {
    const table = this.words;
    // By id through the word list, not an iterator over the map: no entry pair per word in unoptimised code.
    for (let id = 0; id < this.wordTexts.length; id += 1) {
      const word = this.wordTexts[id] as string;
      const count = this.counts[id] ?? 0;
      if (count > 0) table.set(word, count);
      else table.delete(word);
    }
    this.words = new Map();
    this.wordTexts.length = 0;
    this.counts.length = 0;
    return table;
  }

  next(): Token {
    const source = this.source;
    const n = this.n;
    // The hot variables in locals (written back before returning), no closures over them.
    let line = this.line;
    let lineStart = this.lineStart;
    let i = this.i;
    while (i < n) {
      const c = source.charCodeAt(i);
      if (c === 10) {
        i += 1;
        line += 1;
        lineStart = i;
        this.lineExtra = 0;
        this.lines.add(i);
        continue;
      }
      if (c === 32 || c === 9 || c === 13) {
        i += 1;
        continue;
      }
      if (c === 45 && source.charCodeAt(i + 1) === 45) {
        const endOfLine = findLineEnd(source, i);
        // A directive only as a whole-line comment, as the reference reads them (white space before it, nothing else).
        if (startsDirective(source, i + 2) && WHITE_SPACE_ONLY.test(source.slice(lineStart, i)))
          this.directives.push({
            text: source.slice(i, endOfLine),
            line,
            col: i - lineStart + 1 + this.lineExtra,
          });
        // The end of the file, after a last line with no line break, is reported in UTF-8 bytes past the comment.
        if (endOfLine === n) this.noteWide(i, endOfLine);
        i = endOfLine;
        continue;
      }
      const start = i;
      const startLine = line;
      const startCol = start - lineStart + 1 + this.lineExtra;
      let kind: TokenKind;
      let text: string;
      if (isIdentStart(c)) {
        i += 1;
        while (i < n && isIdentPart(source.charCodeAt(i))) i += 1;
        const sliced = source.slice(start, i);
        let id = this.words.get(sliced);
        if (id === undefined) {
          id = this.wordTexts.length;
          this.words.set(sliced, id);
          this.wordTexts.push(sliced);
          this.counts.push(0);
        }
        this.counts[id] = (this.counts[id] as number) + 1;
        text = this.wordTexts[id] as string;
        kind = KEYWORDS.has(text) ? 'keyword' : 'ident';
      } else if (isDigit(c)) {
        const result = scanNumber(source, i);
        i = result.end;
        kind = result.kind;
        text = source.slice(start, i);
      } else if (c === 34) {
        const end = scanString(source, i);
        // An unterminated string (a line break or the end of the text before the closing quote) is one
        // unrecognised token up to there, as the reference lexes it.
        kind = end > 0 ? 'string' : 'unknown';
        i = end > 0 ? end : -end;
        text = source.slice(start, i);
        // A backslash escapes any character, a line break too: the string goes on on the next line.
        for (let at = source.indexOf('\n', start); at !== -1 && at < i; at = source.indexOf('\n', at + 1)) {
          line += 1;
          lineStart = at + 1;
          this.lineExtra = 0;
          this.lines.add(lineStart);
        }
        this.noteWide(lineStart > start ? lineStart : start, i);
      } else if (c === 96) {
        const end = scanBacktick(source, i);
        kind = end > 0 ? 'backtick' : 'unknown';
        i = end > 0 ? end : -end;
        text = source.slice(start, i);
        this.noteWide(start, i);
      } else {
        const two = twoCharPunct(c, source.charCodeAt(i + 1));
        if (two !== undefined) {
          i += 2;
          kind = 'punct';
          text = two;
        } else {
          i += 1;
          const one = PUNCT_TEXT[c];
          kind = one === undefined ? 'unknown' : 'punct';
          text = one ?? source.slice(start, i);
          if (c >= 0x80) this.noteWide(start, i);
        }
      }
      this.line = line;
      this.lineStart = lineStart;
      this.i = i;
      return this.token(kind, text, start, i, startLine, startCol);
    }
    this.line = line;
    this.lineStart = lineStart;
    this.i = i;
    return new LexedToken('eof', '', n, n, line, n - lineStart + 1 + this.lineExtra);
  }

  /**
   * Records the characters outside ASCII of `source[from, to)`, all on the current line (a string's earlier lines
   * hold no position anything is reported at after them), in {@link lines} and {@link lineExtra}.
   */
  private noteWide(from: number, to: number): void {
    const source = this.source;
    for (let at = from; at < to; at += 1) {
      const code = source.charCodeAt(at);
      if (code < 0x80) continue;
      const extra = utf8Extra(code);
      if (extra === 0) continue;
      this.lines.addWide(at, extra);
      this.lineExtra += extra;
    }
  }

  /** A token with these fields: a {@link recycle}d one written over, else a new one. */
  private token(kind: TokenKind, text: string, start: number, end: number, line: number, col: number): Token {
    const token = this.spare.pop();
    if (token === undefined) return new LexedToken(kind, text, start, end, line, col);
    token.kind = kind;
    token.text = text;
    token.start = start;
    token.end = end;
    token.line = line;
    token.col = col;
    return token;
  }
}

/** The two-character punctuation `first` `second` spells, if any (no closure per token: this runs for most). */
function twoCharPunct(first: number, second: number): string | undefined {
  const candidates = TWO_CHAR_BY_FIRST[first];
  if (candidates === undefined) return undefined;
  for (let i = 0; i < candidates.length; i += 1) {
    const candidate = candidates[i] as string;
    if (candidate.charCodeAt(1) === second) return candidate;
  }
  return undefined;
}

/**
 * Whether the comment text from `from` (after its `--`) starts as `parseSpec`'s directive pattern requires: white space
 * as `\s` reads it (the line break aside, which ends the comment), then `allium-ignore`.
 */
function startsDirective(source: string, from: number): boolean {
  DIRECTIVE_START.lastIndex = from;
  return DIRECTIVE_START.test(source);
}

const DIRECTIVE_START = /[^\S\n]*allium-ignore/y;
const WHITE_SPACE_ONLY = /^[^\S\n]*$/;

function findLineEnd(source: string, from: number): number {
  const end = source.indexOf('\n', from);
  return end === -1 ? source.length : end;
}

function scanWhile(source: string, from: number, test: (c: number) => boolean): number {
  let i = from;
  while (i < source.length && test(source.charCodeAt(i))) i += 1;
  return i;
}

function scanNumber(source: string, from: number): { end: number; kind: TokenKind } {
  const digitOrUnderscore = (c: number): boolean => isDigit(c) || c === 95;
  let i = scanWhile(source, from, digitOrUnderscore);
  if (source.charCodeAt(i) === 46 && isDigit(source.charCodeAt(i + 1))) {
    i = scanWhile(source, i + 1, digitOrUnderscore);
  }
  if (source.charCodeAt(i) === 46 && isIdentStart(source.charCodeAt(i + 1))) {
    const wordEnd = scanWhile(source, i + 1, isIdentPart);
    if (DURATION_UNITS.has(source.slice(i + 1, wordEnd))) return { end: wordEnd, kind: 'duration' };
  }
  return { end: i, kind: 'number' };
}

/**
 * Where the string opening at `from` ends: after its closing quote, or, when a line break or the end of the text
 * comes first, the negated offset of that point (an unterminated string). A backslash skips the next character,
 * whatever it is.
 */
function scanString(source: string, from: number): number {
  let i = from + 1;
  while (i < source.length) {
    const c = source.charCodeAt(i);
    if (c === 34) return i + 1;
    if (c === 10) return -i;
    i += c === 92 ? 2 : 1;
  }
  return -source.length;
}

/** {@link scanString} for a backtick literal: no escapes, and a carriage return also ends the line. */
function scanBacktick(source: string, from: number): number {
  let i = from + 1;
  while (i < source.length) {
    const c = source.charCodeAt(i);
    if (c === 96) return i + 1;
    if (c === 10 || c === 13) return -i;
    i += 1;
  }
  return -source.length;
}

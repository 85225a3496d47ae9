import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lex } from './lexer.js';
import { LineIndex } from './line-index.js';
import { parseSpec } from './parse-spec.js';

describe('LineIndex', () => {
  it('gives every token the line and column the lexer gives it, whatever the text', () => {
    // Line breaks inside strings, unterminated strings and backticks, carriage returns, comments, characters
    // outside the BMP: everywhere the lexer counts lines itself.
    const piece = fc.constantFrom(
      '\n',
      '\r\n',
      ' ',
      '"a\nb"',
      '"open',
      '`tick`',
      '`open\n',
      '-- note\n',
      'x',
      '😀',
      '.',
      '42',
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string({ maxLength: 6 })), { maxLength: 40 }), (pieces) => {
        const source = pieces.join('');
        const lexed = lex(source);
        const lines = LineIndex.of(source);
        const parsed = parseSpec(source, 'f.allium').lines;
        for (const token of lexed.tokens) {
          expect(lines.position(token.start)).toEqual({ line: token.line, col: token.col });
          expect(parsed.position(token.start)).toEqual({ line: token.line, col: token.col });
        }
      }),
      { numRuns: 400 },
    );
  });

  it('places an offset at a line break on the line it ends, and one past the end on the last line', () => {
    const lines = LineIndex.of('ab\n\ncd');
    expect(lines.position(2)).toEqual({ line: 1, col: 3 });
    expect(lines.position(3)).toEqual({ line: 2, col: 1 });
    expect(lines.position(4)).toEqual({ line: 3, col: 1 });
    expect(lines.position(9)).toEqual({ line: 3, col: 6 });
    expect(lines.location('f.allium', 5)).toEqual({ file: 'f.allium', line: 3, col: 2 });
    expect(LineIndex.of('').position(0)).toEqual({ line: 1, col: 1 });
  });
});

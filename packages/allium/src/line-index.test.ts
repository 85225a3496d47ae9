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
      'é',
      '"é日"',
      '`日😀`',
      '"😀\né"',
      '-- ü\n',
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

  it('counts columns in UTF-8 bytes, as the reference does', () => {
    // `é` is 2 bytes, `日` 3, `😀` 4 (two UTF-16 units); the line's own characters only.
    const source = 'a "é日" b\n"😀" c\nd';
    const lines = LineIndex.of(source);
    expect(lines.position(source.indexOf('b'))).toEqual({ line: 1, col: 11 });
    expect(lines.position(source.indexOf('c'))).toEqual({ line: 2, col: 8 });
    expect(lines.position(source.indexOf('d'))).toEqual({ line: 3, col: 1 });
    const tokens = lex(source).tokens;
    expect(tokens.map((t) => `${t.text}@${t.line}:${t.col}`)).toEqual([
      'a@1:1',
      '"é日"@1:3',
      'b@1:11',
      '"😀"@2:1',
      'c@2:8',
      'd@3:1',
      '@3:2',
    ]);
  });

  it('counts the end of a file that ends in a comment holding characters outside ASCII in UTF-8 bytes too', () => {
    // The reference's answer: `expected '}', found end of file` at 4:21 (`é` 2 bytes, `→` and `☕` 3 each).
    const spec = parseSpec('-- allium: 3\nentity E {\n    n: Integer\n    -- café → ☕', 's.allium');
    expect(spec.diagnostics.map((d) => `${d.location.line}:${d.location.col} ${d.message}`)).toEqual([
      "4:21 expected '}', found end of file",
    ]);
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

  it('keeps every line of a text far longer than its first allocation', () => {
    // The index starts small (one per file of a folder of thousands) and grows as lines are added: 5,000 lines of
    // different lengths, characters outside ASCII on some, and each line's first and last character placed.
    const lines = Array.from({ length: 5000 }, (_, i) => `${'é'.repeat(i % 3)}${'x'.repeat(i % 17)}y`);
    const source = lines.join('\n');
    const index = LineIndex.of(source);
    const lexed = parseSpec(source, 'f.allium').lines;
    let offset = 0;
    lines.forEach((line, i) => {
      const last = offset + line.length - 1;
      const bytes = Buffer.byteLength(line);
      for (const built of [index, lexed]) {
        expect(built.position(offset)).toEqual({ line: i + 1, col: 1 });
        expect(built.position(last)).toEqual({ line: i + 1, col: bytes });
      }
      offset += line.length + 1;
    });
  });
});

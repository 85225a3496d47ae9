import { describe, expect, it } from 'vitest';
import { literalText, plainText, stringParts } from './string-literal.js';

describe('string literals as the reference reads them', () => {
  it('splits text and `{name}` interpolations, an unclosed one running to the end', () => {
    expect(stringParts('"a{b}c"')).toEqual([{ text: 'a' }, { interpolation: 'b' }, { text: 'c' }]);
    expect(stringParts('"{x}"')).toEqual([{ interpolation: 'x' }]);
    expect(stringParts('"a{b"')).toEqual([{ text: 'a' }, { interpolation: 'b' }]);
    expect(stringParts('""')).toEqual([]);
  });

  it('takes the character after a backslash as it is, a brace too', () => {
    expect(stringParts('"q\\"r"')).toEqual([{ text: 'q"r' }]);
    expect(stringParts('"a\\{b}"')).toEqual([{ text: 'a{b}' }]);
    expect(stringParts('"tab\\t"')).toEqual([{ text: 'tabt' }]);
  });

  it('keeps each UTF-8 byte of a character outside ASCII as a character of its own (Latin-1), as the reference does', () => {
    expect(plainText('"./café.allium"')).toBe('./cafÃ©.allium');
    expect(stringParts('"{é}"')).toEqual([{ interpolation: 'é' }]);
  });

  it('gives a use path without its interpolations and a bound with them as `${name}`', () => {
    expect(plainText('"./core.alliu{m"')).toBe('./core.alliu');
    expect(plainText('"./a\\"b{x}c.allium"')).toBe('./a"bc.allium');
    expect(literalText('"x{name}y"')).toBe('"x${name}y"');
    expect(literalText('"q\\"r"')).toBe('"q"r"');
  });
});

/**
 * A string literal's text as the reference reads it (its `parse_string_parts`), for the two places where that text
 * reaches an answer: a `use` path (resolved, and quoted in `allium.use.unresolvedPath`) and a literal bound in the
 * model's field constraints.
 *
 * Between the quotes, `{name}` is an interpolation (to the next `}`, or to the end when there is none) and a backslash
 * takes the character after it as it is. The reference walks the UTF-8 bytes and keeps each byte as the character
 * of that code, so a character outside ASCII comes out as its bytes read as Latin-1 (`é` as `Ã©`); so does ours.
 */
export type StringPart = { readonly text: string } | { readonly interpolation: string };

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The parts of a string token's text (quotes included, as the lexer gives it). */
export function stringParts(token: string): StringPart[] {
  const bytes = encoder.encode(token.slice(1, -1));
  const parts: StringPart[] = [];
  let text = '';
  let i = 0;
  while (i < bytes.length) {
    const byte = bytes[i]!;
    if (byte === 0x5c && i + 1 < bytes.length) {
      text += String.fromCharCode(bytes[i + 1]!);
      i += 2;
    } else if (byte === 0x7b) {
      if (text !== '') parts.push({ text });
      text = '';
      const start = (i += 1);
      while (i < bytes.length && bytes[i] !== 0x7d) i += 1;
      parts.push({ interpolation: decoder.decode(bytes.subarray(start, i)) });
      if (i < bytes.length) i += 1;
    } else {
      text += String.fromCharCode(byte);
      i += 1;
    }
  }
  if (text !== '') parts.push({ text });
  return parts;
}

/** The text parts only, interpolations dropped: a `use` path, as the reference resolves and reports it. */
export function plainText(token: string): string {
  return stringParts(token)
    .map((part) => ('text' in part ? part.text : ''))
    .join('');
}

/** The literal as the model prints a bound: quoted, each interpolation as `${name}`, escapes resolved. */
export function literalText(token: string): string {
  const inner = stringParts(token)
    .map((part) => ('text' in part ? part.text : `\${${part.interpolation}}`))
    .join('');
  return `"${inner}"`;
}

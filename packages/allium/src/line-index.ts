import type { SourceLocation } from './diagnostic.js';

/** The empty list every index starts {@link LineIndex.wide} with (never written: the first record replaces it). */
const NONE = new Int32Array(0);

/**
 * Where each line of a source text starts, to turn an offset into the 1-based line and column the lexer gives its
 * tokens: every `\n` ends a line (inside a string too), and columns count UTF-8 bytes, as the reference's do (its
 * offsets are byte offsets): a character outside ASCII before a position on its line moves the column by its
 * encoding's length less its UTF-16 length ({@link utf8Extra}), so the index also records where those characters are.
 * Expressions keep only their offsets (two fields fewer on each of the tens of thousands of nodes of a big spec); the
 * few that end up in a diagnostic are located here.
 */
export class LineIndex {
  /**
   * The offset each line starts at: `starts[0]` is 0, line `n` starts at `starts[n - 1]`; {@link count} are set. It
   * starts at 16 lines, which V8 keeps inside the object's own heap (up to 64 bytes); a bigger typed array gets a
   * buffer of its own outside it, which the collector must track and free, and a folder of thousands of small specs
   * has one index per file.
   */
  private starts = new Int32Array(16);
  private count = 1;
  /** The offsets of the characters outside ASCII whose UTF-8 form is longer than their UTF-16 one, in order. */
  private wide = NONE;
  /** `wideExtra[k]`: the extra bytes of `wide[0..k]` together. */
  private wideExtra = NONE;
  private wideCount = 0;

  /** The lines of a whole text (the lexer instead {@link add}s each line as it meets its line break). */
  static of(source: string): LineIndex {
    const lines = new LineIndex();
    for (let at = source.indexOf('\n'); at !== -1; at = source.indexOf('\n', at + 1)) lines.add(at + 1);
    for (const match of source.matchAll(/[^\x00-\x7f]/g)) {
      const extra = utf8Extra(match[0].charCodeAt(0));
      if (extra > 0) lines.addWide(match.index, extra);
    }
    return lines;
  }

  /** Records a character at `offset` (after the last one recorded) whose UTF-8 form is `extra` bytes longer. */
  addWide(offset: number, extra: number): void {
    if (this.wideCount === this.wide.length) {
      const size = Math.max(64, this.wide.length * 2);
      const wide = new Int32Array(size);
      wide.set(this.wide);
      this.wide = wide;
      const sums = new Int32Array(size);
      sums.set(this.wideExtra);
      this.wideExtra = sums;
    }
    const before = this.wideCount === 0 ? 0 : (this.wideExtra[this.wideCount - 1] as number);
    this.wide[this.wideCount] = offset;
    this.wideExtra[this.wideCount] = before + extra;
    this.wideCount += 1;
  }

  /** The extra UTF-8 bytes of the recorded characters before `offset`. */
  private extraBefore(offset: number): number {
    let low = 0;
    let high = this.wideCount;
    // The number of recorded characters before the offset.
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((this.wide[middle] as number) < offset) low = middle + 1;
      else high = middle;
    }
    return low === 0 ? 0 : (this.wideExtra[low - 1] as number);
  }

  /** Records that a line starts at `offset` (after the last one recorded). */
  add(offset: number): void {
    if (this.count === this.starts.length) {
      const grown = new Int32Array(this.starts.length * 2);
      grown.set(this.starts);
      this.starts = grown;
    }
    this.starts[this.count] = offset;
    this.count += 1;
  }

  /** The line and column of `offset` (an offset past the end is on the last line recorded). */
  position(offset: number): { line: number; col: number } {
    let low = 0;
    let high = this.count - 1;
    // The last line starting at or before the offset.
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if ((this.starts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    const start = this.starts[low] as number;
    const extra = this.wideCount === 0 ? 0 : this.extraBefore(offset) - this.extraBefore(start);
    return { line: low + 1, col: offset - start + 1 + extra };
  }

  /** {@link position} as a location in `file`. */
  location(file: string, offset: number): SourceLocation {
    const { line, col } = this.position(offset);
    return { file, line, col };
  }
}

/**
 * How many more bytes UTF-8 takes than UTF-16 for the code unit `code`: 1 from U+0080 to U+07FF, 2 above (a
 * surrogate pair's 4 bytes count on its first half), 0 for ASCII and a pair's second half.
 */
export function utf8Extra(code: number): number {
  if (code < 0x80) return 0;
  if (code < 0x800) return 1;
  return code >= 0xdc00 && code <= 0xdfff ? 0 : 2;
}

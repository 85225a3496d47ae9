import type { SourceLocation } from './diagnostic.js';

/**
 * Where each line of a source text starts, to turn an offset into the 1-based line and column the lexer gives its
 * tokens: every `\n` ends a line (inside a string too), columns count UTF-16 code units. Expressions keep only their
 * offsets (two fields fewer on each of the tens of thousands of nodes of a big spec); the few that end up in a
 * diagnostic are located here.
 */
export class LineIndex {
  /** The offset each line starts at: `starts[0]` is 0, line `n` starts at `starts[n - 1]`; {@link count} are set. */
  private starts = new Int32Array(1024);
  private count = 1;

  /** The lines of a whole text (the lexer instead {@link add}s each line as it meets its line break). */
  static of(source: string): LineIndex {
    const lines = new LineIndex();
    for (let at = source.indexOf('\n'); at !== -1; at = source.indexOf('\n', at + 1)) lines.add(at + 1);
    return lines;
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
    return { line: low + 1, col: offset - (this.starts[low] as number) + 1 };
  }

  /** {@link position} as a location in `file`. */
  location(file: string, offset: number): SourceLocation {
    const { line, col } = this.position(offset);
    return { file, line, col };
  }
}

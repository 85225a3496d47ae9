import type { SourceLocation } from './diagnostic.js';

/**
 * Where each line of a source text starts, to turn an offset into the 1-based line and column the lexer gives its
 * tokens: every `\n` ends a line (inside a string too), columns count UTF-16 code units. Expressions keep only their
 * offsets (two fields fewer on each of the tens of thousands of nodes of a big spec); the few that end up in a
 * diagnostic are located here.
 */
export class LineIndex {
  /** The offset each line starts at: `starts[0]` is 0, line `n` starts at `starts[n - 1]`. */
  private readonly starts: Int32Array;

  constructor(source: string) {
    let lines = 1;
    for (let at = source.indexOf('\n'); at !== -1; at = source.indexOf('\n', at + 1)) lines += 1;
    this.starts = new Int32Array(lines);
    let line = 1;
    for (let at = source.indexOf('\n'); at !== -1; at = source.indexOf('\n', at + 1)) {
      this.starts[line] = at + 1;
      line += 1;
    }
  }

  /** The line and column of `offset` (an offset past the end is on the last line). */
  position(offset: number): { line: number; col: number } {
    let low = 0;
    let high = this.starts.length - 1;
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

/**
 * Splits a byte stream into lines and hands each to `onLine`, holding at most `maxLineBytes` of an unfinished
 * line; longer lines are skipped (and counted), so memory stays bounded whatever the output.
 */
export class LineSplitter {
  readonly #onLine: (line: string) => void;
  readonly #maxLineBytes: number;
  #pending: Buffer[] = [];
  #pendingSize = 0;
  #overflowing = false;
  #skipped = 0;

  constructor(onLine: (line: string) => void, maxLineBytes: number) {
    this.#onLine = onLine;
    this.#maxLineBytes = maxLineBytes;
  }

  /** Lines dropped because they were longer than the limit. */
  get skippedLines(): number {
    return this.#skipped;
  }

  /** Feeds a chunk; complete lines are emitted synchronously. */
  push(chunk: Buffer): void {
    let start = 0;
    let newline = chunk.indexOf(10, start);
    while (newline !== -1) {
      this.#append(chunk.subarray(start, newline));
      this.#emit();
      start = newline + 1;
      newline = chunk.indexOf(10, start);
    }
    this.#append(chunk.subarray(start));
  }

  /** Emits the last line when the stream ended without a newline. */
  end(): void {
    if (this.#pendingSize > 0 || this.#overflowing) this.#emit();
  }

  #append(part: Buffer): void {
    if (part.length === 0 || this.#overflowing) return;
    if (this.#pendingSize + part.length > this.#maxLineBytes) {
      this.#overflowing = true;
      this.#pending = [];
      this.#pendingSize = 0;
      return;
    }
    this.#pending.push(Buffer.from(part));
    this.#pendingSize += part.length;
  }

  #emit(): void {
    if (this.#overflowing) {
      this.#skipped += 1;
      this.#overflowing = false;
      return;
    }
    const line = Buffer.concat(this.#pending).toString('utf8');
    this.#pending = [];
    this.#pendingSize = 0;
    this.#onLine(line.endsWith('\r') ? line.slice(0, -1) : line);
  }
}

/** What a {@link BoundedCapture} kept: the first and last bytes of a stream and how many it dropped between. */
export interface CaptureSnapshot {
  readonly head: string;
  readonly tail: string;
  readonly totalBytes: number;
  /** Bytes between `head` and `tail` that were counted but not kept. */
  readonly omittedBytes: number;
}

/**
 * Keeps the first `headBytes` and the last `tailBytes` of a byte stream and counts the rest, so any amount of
 * output costs at most `headBytes + tailBytes` (plus one chunk) of memory.
 */
export class BoundedCapture {
  readonly #headLimit: number;
  readonly #tailLimit: number;
  readonly #head: Buffer[] = [];
  #headSize = 0;
  #tail: Buffer[] = [];
  #tailSize = 0;
  #total = 0;

  constructor(headBytes: number, tailBytes: number) {
    this.#headLimit = headBytes;
    this.#tailLimit = tailBytes;
  }

  /** Adds a chunk of output. */
  push(chunk: Buffer): void {
    this.#total += chunk.length;
    let rest = chunk;
    if (this.#headSize < this.#headLimit) {
      const take = Math.min(this.#headLimit - this.#headSize, rest.length);
      this.#head.push(rest.subarray(0, take));
      this.#headSize += take;
      rest = rest.subarray(take);
    }
    if (rest.length > 0) this.#pushTail(rest);
  }

  #pushTail(chunk: Buffer): void {
    // Copy so a retained tail slice never pins a large chunk's whole backing buffer.
    const kept = chunk.length > this.#tailLimit ? chunk.subarray(chunk.length - this.#tailLimit) : chunk;
    this.#tail.push(Buffer.from(kept));
    this.#tailSize += kept.length;
    while (this.#tailSize > this.#tailLimit && this.#tail.length > 0) {
      const first = this.#tail[0]!;
      const excess = this.#tailSize - this.#tailLimit;
      if (first.length <= excess) {
        this.#tail.shift();
        this.#tailSize -= first.length;
      } else {
        this.#tail[0] = first.subarray(excess);
        this.#tailSize -= excess;
      }
    }
  }

  /** Bytes currently held in memory (never more than head + tail limits). */
  get retainedBytes(): number {
    return this.#headSize + this.#tailSize;
  }

  /** The kept text and the counts. */
  snapshot(): CaptureSnapshot {
    return {
      head: Buffer.concat(this.#head).toString('utf8'),
      tail: Buffer.concat(this.#tail).toString('utf8'),
      totalBytes: this.#total,
      omittedBytes: this.#total - this.#headSize - this.#tailSize,
    };
  }
}

/** The whole text of a capture when nothing was dropped, else `undefined`. */
export function completeText(snapshot: CaptureSnapshot): string | undefined {
  return snapshot.omittedBytes === 0 ? snapshot.head + snapshot.tail : undefined;
}

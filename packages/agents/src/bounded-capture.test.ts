import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BoundedCapture } from './bounded-capture.js';
import { LineSplitter } from './line-splitter.js';

describe('BoundedCapture', () => {
  it('keeps exactly the first and last bytes and counts the middle, whatever the chunking', () => {
    fc.assert(
      fc.property(
        fc.array(fc.uint8Array({ maxLength: 64 }), { maxLength: 30 }),
        fc.nat(100),
        fc.nat(100),
        (chunks, head, tail) => {
          const capture = new BoundedCapture(head, tail);
          for (const chunk of chunks) capture.push(Buffer.from(chunk));
          const all = Buffer.concat(chunks.map((c) => Buffer.from(c)));
          const keptHead = all.subarray(0, head);
          const keptTail = all.subarray(Math.max(head, all.length - tail));
          const snap = capture.snapshot();
          expect(snap.totalBytes).toBe(all.length);
          expect(snap.omittedBytes).toBe(all.length - keptHead.length - keptTail.length);
          expect(capture.retainedBytes).toBeLessThanOrEqual(head + tail);
          expect(snap.head).toBe(keptHead.toString('utf8'));
          expect(snap.tail).toBe(keptTail.toString('utf8'));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('LineSplitter', () => {
  it('emits the same lines whatever the chunking, skipping lines over the limit', () => {
    fc.assert(
      fc.property(
        fc.array(fc.stringMatching(/^[a-z]{0,12}$/), { maxLength: 20 }),
        fc.nat(20),
        (lines, cut) => {
          const text = lines.join('\n');
          const seen: string[] = [];
          const splitter = new LineSplitter((l) => seen.push(l), 8);
          const bytes = Buffer.from(text);
          const at = Math.min(cut, bytes.length);
          splitter.push(bytes.subarray(0, at));
          splitter.push(bytes.subarray(at));
          splitter.end();
          const expected = text === '' ? [] : text.split('\n').filter((l) => l.length <= 8);
          expect(seen.filter((l) => l !== '')).toEqual(expected.filter((l) => l !== ''));
          expect(splitter.skippedLines).toBe(
            text === '' ? 0 : text.split('\n').filter((l) => l.length > 8).length,
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});

import { specCommand } from './commands/spec.js';
import { dispatch, redactingIo } from './dispatch.js';
import { type ProcessEnd, runAsProcess } from './process-io.js';

// The composition root of `allium-loop spec …` alone, which the bin shim loads instead of main.ts when the first
// argument is `spec`: a check of a big spec is a one-shot process whose start-up is part of what the user waits for
// (tools/bench/spec). The build bundles this entry into one file with nothing else in it (package/spec-entry.mjs, for
// the npm package and the repository alike), so Node loads one module instead of main's table of commands and the
// modules they share. It answers exactly as main.ts does for
// `spec` (the same process boundary, redactor and dispatch; main.test.ts compares the two).
// No top-level await: the build bundles this file as CommonJS (spec-loader.ts runs it with V8's code
// cache), and runAsProcess reports every failure itself. Its output is written straight to the file descriptors
// (process-io.ts, descriptorWriter): Node never builds its stdout and stderr streams, and a big report is not held in
// memory while the reader catches up.
void runAsProcess(
  async (argv, io) => dispatch(argv[0], argv.slice(1), await redactingIo(io), [specCommand]),
  {
    output: 'descriptors',
  },
).then(exitOnceWritten);

/**
 * Ends the process as soon as the answer is written. Left to end by itself, Node 20 first lets V8's background threads
 * finish what they have queued (optimising compiles of code that will not run again) and frees a heap of tens of
 * megabytes. On a quiet machine that made no measurable difference; with the other core busy, a 50k-line check took
 * 392 ms against 360 ms ending at once (medians of 21 alternating runs; tools/bench/spec/README.md, eighth pass).
 * Only when nothing waits for the end: no output still pending (the descriptor writers hand everything over before they
 * return; this covers a stream something else built, such as Node printing a warning) and no `beforeExit` listener
 * (the build's code-cache writer in spec-loader.ts is one); otherwise the process ends as usual. `exit` listeners run
 * either way. main.test.ts sends a big report into a TCP socket whose reader waits, and checks it arrives whole.
 */
function exitOnceWritten({ outputPending }: ProcessEnd): void {
  if (outputPending()) return;
  if (process.listenerCount('beforeExit') > 0) return;
  process.exit();
}

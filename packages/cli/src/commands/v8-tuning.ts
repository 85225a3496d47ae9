/**
 * V8 tuned for one pass over a big input: on Node's command line when the launcher starts `spec`, else set by the
 * command itself (`v8.setFlagsFromString`; the first two are read each time V8 uses them, so they apply from there on).
 * `tools/bench/spec/check.bench.ts` measures the effect.
 *
 * - `--semi-space-growth-factor=1`: parsing and checking keep nearly everything they allocate (the syntax tree, the
 *   index, the diagnostics), so V8's default of doubling the young generation whenever most of it survives only buys
 *   copies: up to 32 MB more resident memory and no fewer collections. The young generation stays at its initial
 *   size for the rest of this process. Started by the launcher, the equal minimum and maximum below already hold it
 *   there; the flag matters when `spec` sets its flags at run time, where those two change nothing.
 * - `--interrupt-budget=500000` (V8's default is 67,584 bytes of bytecode run before a function is considered for
 *   the optimising compiler): a check runs hundreds of functions a few thousand times each, once. At the default
 *   most of them get compiled by TurboFan, which on a 2-core machine takes the second core away from the collector and
 *   touches fresh memory for its zones; with a larger budget only the hot ones (the lexer, the parser's core, the
 *   walks) are. At 50k lines 15 times the default took CPU time 0.86 → 0.58 s and peak RSS 75.0 → 71.8 MB (sixth
 *   pass); counting instructions per thread (seventh pass), 7.4 times the default does 9% less on the main thread
 *   than 15 times (2.22 against 2.41–2.45 G) and 4% less in all, for about 1 MB more peak memory; 3.7 times does 14%
 *   less on the main thread but 4% more in all; on the parse alone the default does 26% less on the main thread and
 *   three times as much on the others (`tools/bench/spec/README.md`).
 *
 * - `--min-semi-space-size=2 --max-semi-space-size=2`: a young generation of 2 MB per half instead of 1 MB. Each
 *   collection of it copies what survives, which in a parse is nearly all (the tree), so half as many collections copy
 *   about half as much: at 50k lines 84 collections became 38, their pauses about 75 → 51 ms (medians), for 2 MB more peak
 *   memory (tools/bench/spec/README.md, ninth pass). V8 sizes the young generation when the process starts, so these
 *   two take effect only on Node's command line.
 *
 * - `--initial-old-space-size=32`: V8 starts the old generation with a limit that a 50k-line spec's tree and index
 *   (about 15 MB once promoted) pass before the parse ends, and then marks and compacts the whole heap (8–14 ms on the
 *   main thread, its marking on the other core), which frees almost nothing: what a check keeps lives to the end. With
 *   32 MB to start with, no full collection runs up to about 60k lines; larger specs get them as before (one at 100k
 *   lines). At 50k lines 0.95× the wall time with the other core busy (31 alternating rounds) and 5% less CPU, for
 *   under 1 MB more peak memory (tools/bench/spec/README.md, eleventh pass). Read when the heap is set up, so it too
 *   takes effect only on Node's command line.
 *
 * The launcher (bin/allium-loop) puts all of {@link SPEC_V8_FLAGS} on Node's command line, and then nothing here loads
 * `node:v8`, whose module loads Node's stream modules (7 ms of an empty spec's check). Started any other way (the Node
 * shim, main.ts), `spec` sets them at run time ({@link tuneV8ForOneCheck}); the young generation then keeps its size.
 * V8 takes a code cache only under the flags it was written with, and flags given on the command line and the same
 * flags set at run time do not count as the same to it (seen here, not documented), so the spec entry's loader
 * (`spec-loader.ts`) sets them first, before it compiles the spec bundle, and the build writes one cache for each way
 * of starting (`package/spec-entry.mjs`).
 *
 * Beside the flags, the launcher sets `MALLOC_ARENA_MAX` to {@link SPEC_MALLOC_ARENA_MAX} for `spec` (unless the user
 * set it): glibc's malloc gives each thread that allocates while another holds the lock an arena of its own, and
 * V8's compiler and collector threads fill theirs with their zones. One arena for the whole process took a 50k-line
 * check's peak memory 70.4 → 66.7 MB (edge-case mix) and 71.7 → 68.0 MB (the bench's), 4–5 MB at 100k lines, with
 * the wall time inside the noise (tools/bench/spec/README.md, nineteenth pass). glibc reads the variable when the
 * process starts, so it cannot be set from here; started another way, `spec` runs without it. C libraries other than
 * glibc ignore it.
 *
 * (A smaller old-generation growth, `--heap-growing-percent=50`, saved 1.8 MB at 50k lines until the tree and the
 * report got smaller; after that it saved nothing there and cost 19% wall time at 100k lines, so it is not set.)
 */
export function tuneV8ForOneCheck(): void {
  if (v8FlagsOnCommandLine()) return;
  const { setFlagsFromString } = process.getBuiltinModule('node:v8');
  for (const flag of SPEC_V8_FLAGS) setFlagsFromString(flag);
}

/** The V8 flags `spec` runs with (see above), word for word as bin/allium-loop passes them. */
export const SPEC_V8_FLAGS: readonly string[] = [
  '--semi-space-growth-factor=1',
  '--interrupt-budget=500000',
  '--min-semi-space-size=2',
  '--max-semi-space-size=2',
  '--initial-old-space-size=32',
];

/** Whether Node was started with every one of {@link SPEC_V8_FLAGS} (by the launcher). */
export function v8FlagsOnCommandLine(): boolean {
  return SPEC_V8_FLAGS.every((flag) => process.execArgv.includes(flag));
}

/** The `MALLOC_ARENA_MAX` the launcher starts `spec` with when the user has not set one (see above). */
export const SPEC_MALLOC_ARENA_MAX = '1';

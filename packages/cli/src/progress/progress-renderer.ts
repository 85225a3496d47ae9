import type { AgentActivity } from '@allium-loop/agents';
import type { JournalEvent } from '@allium-loop/ledger';
import { formatUsd, type LoopProgress, type ModeProgress } from '@allium-loop/orchestrator';
import { createLogUpdate } from 'log-update';
import type { CliIo } from '../cli-io.js';

/** How a run prints: text for people, nothing but the report (`--quiet`), or NDJSON events (`--json`). */
export type OutputMode = 'text' | 'quiet' | 'json';

/** The one progress renderer of `run`, `resume` and `demo`, for the spec loop and every loop mode alike. */
export interface ProgressRenderer {
  /** Spec-loop progress (phase markers, tick lines, journal events). */
  readonly loop: (progress: LoopProgress) => void;
  /** Loop-mode progress (lines and journal events). */
  readonly mode: (progress: ModeProgress) => void;
  /** The running agent call's activity (tool in use, tokens so far), as its CLI streams it. */
  readonly activity: (activity: AgentActivity) => void;
  /** A one-off announcement (entry point, test command, slug, lease takeover). */
  readonly announce: (line: string) => void;
  /** The final report: printed in text and quiet mode, never in JSON mode. */
  readonly report: (text: string) => void;
  /** Stops the timers and leaves the terminal clean (the status line erased). Idempotent. */
  readonly close: () => void;
}

/** Options of {@link createProgressRenderer}. */
export interface ProgressOptions {
  readonly mode: OutputMode;
  /** Without a terminal: a plain heartbeat line this often while the run goes on (default 30 s). */
  readonly heartbeatMs?: number;
  /** On a terminal: the status line is redrawn this often (default 1 s) besides on every event. */
  readonly redrawMs?: number;
}

/** What the status line knows: the latest phase, slice, call and its activity, tests, spend and notable event. */
export interface Status {
  phase?: string | undefined;
  slice?: string | undefined;
  callStartedAt?: number | undefined;
  /** The running call's activity, as its CLI streams it. */
  call?: AgentActivity | undefined;
  tick?: number | undefined;
  tests?: string | undefined;
  /** Spend the ledger recorded at the latest tick (`null`: not known). */
  spentUsd?: number | null | undefined;
  /** Estimated cost of the calls ended since that tick (their CLI's running estimate, when it had one). */
  unrecordedUsd?: number | undefined;
  /** A call since that tick streamed tokens but no price: the spend shown is a lower bound (`≥$0.42`). */
  unrecordedUnknown?: boolean | undefined;
  activity?: string | undefined;
}

/** `1m05s`, `42s`. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  return minutes > 0 ? `${String(minutes)}m${String(seconds % 60).padStart(2, '0')}s` : `${String(seconds)}s`;
}

/** `950 tok`, `3.2k tok`, `1.4M tok`. */
export function formatTokens(tokens: number): string {
  if (tokens < 1000) return `${String(tokens)} tok`;
  if (tokens < 1_000_000) return `${(tokens / 1000).toFixed(1)}k tok`;
  return `${(tokens / 1_000_000).toFixed(1)}M tok`;
}

/**
 * The status line: `⏵ implement [slice-a] · agent call 12s · Edit src/x.ts · 3.2k tok · tick 3 · tests 14/17 ·
 * $0.42 · red-check: …`. The spend is the ledger's at the latest tick plus the running estimate of the calls since.
 */
export function formatStatus(status: Status, now: number): string {
  const parts = [`⏵ ${status.phase ?? 'starting'}${status.slice === undefined ? '' : ` [${status.slice}]`}`];
  if (status.callStartedAt !== undefined) {
    parts.push(`agent call ${formatElapsed(now - status.callStartedAt)}`);
    if (status.call?.tool !== undefined) parts.push(status.call.tool);
    if (status.call?.tokens !== undefined) parts.push(formatTokens(status.call.tokens));
  }
  if (status.tick !== undefined) parts.push(`tick ${String(status.tick)}`);
  if (status.tests !== undefined) parts.push(status.tests);
  const usd = (status.spentUsd ?? 0) + (status.unrecordedUsd ?? 0) + (status.call?.costUsd ?? 0);
  const unknown =
    status.spentUsd === null ||
    status.unrecordedUnknown === true ||
    (status.call?.tokens !== undefined && status.call.costUsd === undefined);
  parts.push(formatUsd(usd, unknown ? 1 : 0));
  if (status.activity !== undefined) parts.push(status.activity);
  return parts.join(' · ');
}

/** The journal events worth a line under the phase markers: red-checks, failed phases, violations, questions. */
export function describeEvent(event: JournalEvent): string | undefined {
  switch (event.type) {
    case 'phase_ended':
      return event.outcome === 'failed' ? `${event.phase} failed: ${event.detail ?? 'no detail'}` : undefined;
    case 'violation':
      return `violation (${event.kind}${event.reverted ? ', reverted' : ''}): ${event.detail}`;
    case 'question_raised':
      return `question ${event.question.id} (${event.question.classification}): ${event.question.text}`;
    case 'x-loop.red_check': {
      const data = event.data as { failing?: string[]; vacuous?: string[] };
      const failing = data.failing?.length ?? 0;
      const vacuous = data.vacuous ?? [];
      return `red-check: ${String(failing)} new test(s) fail first as they should${vacuous.length > 0 ? `; ${String(vacuous.length)} already green (covered or vacuous, not carried into implement): ${vacuous.join('; ')}` : ''}`;
    }
    default:
      return undefined;
  }
}

function testsOf(event: JournalEvent): string | undefined {
  if (event.type !== 'verdict') return undefined;
  const tests = event.verdict.tests;
  return tests.status === 'known'
    ? `tests ${String(tests.passed)}/${String(tests.passed + tests.failed)}`
    : 'tests ?/?';
}

/** A call ended: its running estimate counts toward the spend until the next tick records the real figure. */
function endCall(status: Status): void {
  const call = status.call;
  status.call = undefined;
  if (call?.tokens === undefined) return;
  if (call.costUsd === undefined) status.unrecordedUnknown = true;
  else status.unrecordedUsd = (status.unrecordedUsd ?? 0) + call.costUsd;
}

/** `tests 7/9` from the data of an `x-loop.tests` event (a test run between implement rounds). */
function testsMeasured(data: unknown): string | undefined {
  const counts = data as { passed?: unknown; failed?: unknown } | undefined;
  if (typeof counts?.passed !== 'number' || typeof counts.failed !== 'number') return 'tests ?/?';
  return `tests ${String(counts.passed)}/${String(counts.passed + counts.failed)}`;
}

/** The plain line a test run between implement rounds prints without a terminal. */
function describeTestRun(event: JournalEvent): string | undefined {
  if (event.type !== 'x-loop.tests') return undefined;
  const round = (event.data as { round?: unknown } | undefined)?.round;
  const counts = testsMeasured(event.data) ?? 'tests ?/?';
  return typeof round === 'number' && round > 0 ? `${counts} after implement round ${String(round)}` : counts;
}

/** Folds one journal event into the status. */
function observe(status: Status, event: JournalEvent, now: number): void {
  if (event.tick !== undefined) status.tick = event.tick;
  switch (event.type) {
    case 'intent_begun':
      status.phase = event.phase;
      if (event.action === 'agent-call') {
        status.callStartedAt = now;
        status.call = undefined;
      }
      break;
    case 'phase_started':
      status.phase = event.phase;
      break;
    case 'intent_ended':
      status.callStartedAt = undefined;
      endCall(status);
      break;
    case 'tick_recorded':
      // The ledger's spend now includes the calls whose running estimates were added since the last tick.
      if (event.usd !== undefined) status.spentUsd = event.usd;
      status.unrecordedUsd = undefined;
      status.unrecordedUnknown = undefined;
      break;
    case 'x-loop.tests':
      status.tests = testsMeasured(event.data) ?? status.tests;
      break;
    default:
      status.tests = testsOf(event) ?? status.tests;
  }
  status.activity = describeEvent(event) ?? status.activity;
}

/** The slice a tick line or marker names (`[slice-id] tick 2 · …`). */
function sliceOf(line: string): string | undefined {
  return /^\[([^\]]+)\]/.exec(line)?.[1];
}

/**
 * Builds the progress renderer. On a terminal (`io.isTTY`) in text mode, permanent lines scroll above a status line
 * that log-update redraws in place; without a terminal a plain heartbeat line is printed every `heartbeatMs`. JSON
 * mode writes only journal events to stdout (announcements go to stderr); quiet mode prints only the report.
 */
export function createProgressRenderer(io: CliIo, options: ProgressOptions): ProgressRenderer {
  const now = io.now ?? (() => Date.now());
  const status: Status = {};
  const live = options.mode === 'text' && io.isTTY;
  const screen = live
    ? createLogUpdate(
        {
          write: (text: string) => {
            io.stdout(text);
            return true;
          },
          isTTY: true,
          get columns() {
            return io.columns?.() ?? 80;
          },
        } as unknown as NodeJS.WriteStream,
        { showCursor: true },
      )
    : undefined;
  let closed = false;
  const redraw = () => {
    if (!closed) screen?.(formatStatus(status, now()));
  };
  const print = (text: string) => {
    if (screen === undefined || closed) io.stdout(text);
    else {
      screen.clear();
      io.stdout(text);
      redraw();
    }
  };
  const heartbeat = () => {
    if (!closed) io.stdout(`… ${formatStatus(status, now()).slice(2)}\n`);
  };
  const timer =
    options.mode !== 'text'
      ? undefined
      : live
        ? setInterval(redraw, options.redrawMs ?? 1000)
        : setInterval(heartbeat, options.heartbeatMs ?? 30_000);
  timer?.unref();
  const onEvent = (event: JournalEvent) => {
    observe(status, event, now());
    if (options.mode === 'json') {
      io.stdout(`${JSON.stringify(event)}\n`);
      return;
    }
    // On a terminal the status line shows the test count of each run; a log gets a plain line for it.
    const line = describeEvent(event) ?? (live ? undefined : describeTestRun(event));
    if (options.mode === 'text' && line !== undefined) print(`    ${line}\n`);
    redraw();
  };
  const onLine = (line: string) => {
    status.slice = sliceOf(line) ?? status.slice;
    // A tick line (formatTickLine of the orchestrator) carries the tests of the tick's measure.
    status.tests = /\btests (\d+\/\d+|\?\/\?)/.exec(line)?.[0] ?? status.tests;
    if (options.mode === 'text' && line !== '') print(`${line}\n`);
  };
  return {
    loop: (progress) => {
      if (progress.kind === 'event') onEvent(progress.event);
      else onLine(progress.kind === 'tick' ? progress.line : progress.text);
    },
    mode: (progress) => {
      if (progress.kind === 'event') onEvent(progress.event);
      else if (options.mode === 'json') io.stderr(`${progress.text}\n`);
      else onLine(progress.text);
    },
    activity: (activity) => {
      if (status.callStartedAt === undefined) return;
      const newTool = activity.tool !== status.call?.tool;
      status.call = activity;
      // A new tool is worth showing at once; token counts (many per second) wait for the next redraw.
      if (newTool) redraw();
    },
    announce: (line) => {
      if (options.mode === 'json') io.stderr(`${line}\n`);
      else if (options.mode === 'text') print(`${line}\n`);
    },
    report: (text) => {
      if (options.mode !== 'json') print(text);
    },
    close: () => {
      if (closed) return;
      if (timer !== undefined) clearInterval(timer);
      screen?.clear();
      screen?.done();
      closed = true;
    },
  };
}

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

/** What the status line knows: the latest phase, slice, call, activity, tests and spend. */
interface Status {
  phase?: string | undefined;
  slice?: string | undefined;
  callStartedAt?: number | undefined;
  tick?: number | undefined;
  tests?: string | undefined;
  usd?: string | undefined;
  activity?: string | undefined;
}

/** `1m05s`, `42s`. */
export function formatElapsed(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const minutes = Math.floor(seconds / 60);
  return minutes > 0 ? `${String(minutes)}m${String(seconds % 60).padStart(2, '0')}s` : `${String(seconds)}s`;
}

/** The status line: `⏵ implement [slice-a] · agent call 1m05s · tick 3 · tests 14/17 · $0.42 · red-check: …`. */
export function formatStatus(status: Status, now: number): string {
  const parts = [`⏵ ${status.phase ?? 'starting'}${status.slice === undefined ? '' : ` [${status.slice}]`}`];
  if (status.callStartedAt !== undefined)
    parts.push(`agent call ${formatElapsed(now - status.callStartedAt)}`);
  if (status.tick !== undefined) parts.push(`tick ${String(status.tick)}`);
  if (status.tests !== undefined) parts.push(status.tests);
  parts.push(status.usd ?? '$0.00');
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

/** Folds one journal event into the status. */
function observe(status: Status, event: JournalEvent, now: number): void {
  if (event.tick !== undefined) status.tick = event.tick;
  switch (event.type) {
    case 'intent_begun':
      status.phase = event.phase;
      if (event.action === 'agent-call') status.callStartedAt = now;
      break;
    case 'phase_started':
      status.phase = event.phase;
      break;
    case 'intent_ended':
      status.callStartedAt = undefined;
      break;
    case 'tick_recorded':
      if (event.usd !== undefined) status.usd = formatUsd(event.usd);
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
    const line = describeEvent(event);
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

/** One thing the scripted model asks the agent CLI to do with its own tools, one tool call per model turn. */
export type ScriptedAction =
  /** Write a whole file (relative paths are resolved against the agent's working directory). */
  | { readonly kind: 'write'; readonly path: string; readonly content: string }
  /** Replace `oldText` (which must occur once, as whole lines) with `newText` in a file. */
  | { readonly kind: 'edit'; readonly path: string; readonly oldText: string; readonly newText: string }
  /** Run a shell command in the working directory. */
  | { readonly kind: 'shell'; readonly command: string }
  /**
   * Write `value` as JSON to the result file the allium-loop prompt names ("write a JSON document to `…`");
   * the call fails loudly (HTTP 500, recorded) when the prompt names none.
   */
  | { readonly kind: 'result'; readonly value: unknown };

/** A failure the server plays instead of (or in the middle of) a model turn. */
export type ScriptedFault =
  /** Send the start of the stream, then nothing more; the connection stays open until the client goes. */
  | { readonly kind: 'stall' }
  /** HTTP 429 with a `retry-after` header (seconds). */
  | { readonly kind: 'rate_limit'; readonly retryAfterSeconds: number }
  /** HTTP 401: the key was refused. */
  | { readonly kind: 'unauthorized' }
  /** HTTP 500. */
  | { readonly kind: 'server_error' }
  /** A 200 stream whose events are not valid JSON, then the end of the response. */
  | { readonly kind: 'malformed_sse' }
  /** A final text of `bytes` bytes sent as many small deltas. */
  | { readonly kind: 'long_stream'; readonly bytes: number };

/** Tokens the server reports for one model turn. */
export interface TurnUsage {
  readonly input: number;
  readonly output: number;
  readonly cacheRead?: number;
  readonly cacheWrite?: number;
}

/** One scripted agent call: which prompt it answers, what the model does, and what it finally says. */
export interface ScriptedCall {
  /** A note for the reader (and for the request log). */
  readonly name?: string;
  /** Matched against the user text of the conversation: a substring, or a regular expression. */
  readonly match: string | RegExp;
  /** Tool calls, one per model turn, in order. */
  readonly actions?: readonly ScriptedAction[];
  /** The final answer; default `done`. */
  readonly finalText?: string;
  /**
   * A fault played on every model turn of this call from turn `fault.atTurn` (default 0) on, retries included;
   * with `times`, only on the first `times` requests that reach that turn (the CLI's own retries and the
   * engine's rerun of the call count alike), after which the call plays on as scripted.
   */
  readonly fault?: ScriptedFault & { readonly atTurn?: number; readonly times?: number };
  /** Tokens per turn; default {@link DEFAULT_TURN_USAGE}. */
  readonly usage?: TurnUsage;
  /** Answers every later matching call too, instead of being used up by the first. */
  readonly repeat?: boolean;
}

/** The tokens reported per turn when a call names none. */
export const DEFAULT_TURN_USAGE: TurnUsage = { input: 1200, output: 80 };

/** True when a call's `match` accepts `text`. */
export function matches(call: ScriptedCall, text: string): boolean {
  return typeof call.match === 'string' ? text.includes(call.match) : call.match.test(text);
}

/** The result file an allium-loop prompt asks for, or `undefined`. */
export function resultFileOf(prompt: string): string | undefined {
  return /write a JSON document to `([^`]+)`/.exec(prompt)?.[1];
}

/** The working directory a CLI announces in its system prompt or environment context, or `undefined`. */
export function workdirOf(text: string): string | undefined {
  const tagged = /<cwd>([^<\n]+)<\/cwd>/.exec(text)?.[1];
  if (tagged !== undefined) return tagged.trim();
  const gemini = /Workspace Directories:\**\s*\n\s*-\s*(\/\S+)/.exec(text)?.[1];
  if (gemini !== undefined) return gemini;
  return /(?:Primary working directory|Working directory):\s*(\/\S+)/.exec(text)?.[1];
}

/**
 * Plays a list of scripted calls in order: a new conversation takes the first call not yet used whose
 * `match` accepts its text (calls with `repeat` are never used up).
 */
export class ScriptPlayer {
  private readonly used = new Set<number>();

  constructor(private calls: readonly ScriptedCall[]) {}

  /** Replaces the script and forgets which calls were used. */
  reset(calls: readonly ScriptedCall[]): void {
    this.calls = calls;
    this.used.clear();
  }

  /** Appends calls to the script. */
  append(calls: readonly ScriptedCall[]): void {
    this.calls = [...this.calls, ...calls];
  }

  /** The index of the call that answers a new conversation with `text`, or `undefined`. */
  take(text: string): number | undefined {
    const index = this.calls.findIndex((call, i) => !this.used.has(i) && matches(call, text));
    if (index < 0) return undefined;
    if (this.calls[index]?.repeat !== true) this.used.add(index);
    return index;
  }

  call(index: number): ScriptedCall | undefined {
    return this.calls[index];
  }

  /** Calls not yet used (ignoring `repeat` calls): what a test expects to be empty at the end. */
  unused(): ScriptedCall[] {
    return this.calls.filter((call, i) => !this.used.has(i) && call.repeat !== true);
  }
}

import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { writeFileAtomic } from '@allium-loop/ledger';
import type { AgentRunner, AgentRunRequest, AgentRunResult } from './agent-runner.js';

/** What a {@link FakeAgentRunner} does for one call. */
export interface FakeAgentResponse {
  /** JSON written atomically to the request's result file; omit to write none. */
  readonly result?: unknown;
  /** Files to write, relative to the request's cwd. */
  readonly files?: Readonly<Record<string, string>>;
  /** Fields of the result to return (default: `ok`, exit 0, no cost). */
  readonly outcome?: Partial<Omit<AgentRunResult, 'transcriptPath'>>;
  /** Runs before anything is written, with the request; throw to make `run` reject. */
  readonly effect?: (request: AgentRunRequest) => void | Promise<void>;
}

/** A response, or a function computing one from the request. */
export type FakeAgentScript =
  FakeAgentResponse | ((request: AgentRunRequest, call: number) => FakeAgentResponse);

/**
 * An in-process {@link AgentRunner} for other packages' unit tests: it starts no process, records every request
 * in `calls`, and answers from a queue of responses (the last one repeats) — writing the result file and any
 * files it names. Use the real adapters with the `replay` script for end-to-end tests.
 */
export class FakeAgentRunner implements AgentRunner {
  readonly name = 'fake';
  readonly calls: AgentRunRequest[] = [];
  readonly #responses: FakeAgentScript[];

  constructor(responses: readonly FakeAgentScript[] = [{}]) {
    this.#responses = [...responses];
  }

  /** Plays the next response. */
  async run(request: AgentRunRequest): Promise<AgentRunResult> {
    this.calls.push(request);
    const script = this.#responses[Math.min(this.calls.length, this.#responses.length) - 1] ?? {};
    const response = typeof script === 'function' ? script(request, this.calls.length) : script;
    if (request.signal?.aborted === true) return this.#result({ outcome: 'aborted', exitCode: null });
    await response.effect?.(request);
    for (const [path, content] of Object.entries(response.files ?? {})) {
      const target = `${request.cwd}/${path}`;
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, content);
    }
    if (response.result !== undefined) await writeJsonAtomically(request.resultFile, response.result);
    return this.#result(response.outcome ?? {});
  }

  #result(fields: Partial<Omit<AgentRunResult, 'transcriptPath'>>): AgentRunResult {
    return { outcome: 'ok', exitCode: 0, signal: null, durationMs: 0, transcriptPath: '', ...fields };
  }
}

async function writeJsonAtomically(path: string, value: unknown): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(value, null, 2));
}

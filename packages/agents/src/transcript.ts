import { mkdir, open } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import type { Redactor } from '@allium-loop/ledger';
import { AgentTranscriptError } from './agent-errors.js';
import type { AgentOutcome, AgentRunRequest } from './agent-runner.js';
import type { AgentReport } from './agent-report.js';
import type { CaptureSnapshot } from './bounded-capture.js';
import type { ProcessRunResult } from './process-runner.js';

/** Characters of the prompt copied into a transcript. */
const PROMPT_EXCERPT_CHARS = 4_000;

/** Everything a transcript records about one call. */
export interface TranscriptInput {
  readonly adapter: string;
  readonly request: AgentRunRequest;
  readonly file: string;
  readonly args: readonly string[];
  /** Names only: values never reach a transcript. */
  readonly envNames: readonly string[];
  readonly startedAt: Date;
  readonly run: ProcessRunResult;
  readonly report: AgentReport;
  readonly outcome: AgentOutcome;
  /** Further named sections, e.g. Codex's last message. */
  readonly sections?: Readonly<Record<string, string>>;
}

/** The folder a call's transcript goes to (see {@link AgentRunRequest.transcriptDir}). */
export function resolveTranscriptDir(request: AgentRunRequest, configured: string | undefined): string {
  return request.transcriptDir ?? configured ?? join(dirname(dirname(request.resultFile)), 'transcripts');
}

/** Renders a call as plain text, every part passed through `redactor`. */
export function renderTranscript(input: TranscriptInput, redactor: Redactor): string {
  const { run, report, request } = input;
  const lines = [
    '# allium-loop agent transcript',
    `adapter: ${input.adapter}`,
    `phase: ${request.phase}`,
    `cwd: ${request.cwd}`,
    `result file: ${request.resultFile}`,
    `command: ${JSON.stringify([input.file, ...input.args])}`,
    `environment: ${input.envNames.join(', ')}`,
    `started: ${input.startedAt.toISOString()}`,
    `duration: ${run.durationMs} ms`,
    `exit: ${run.exitCode === null ? `signal ${run.signal ?? 'none'}` : `code ${run.exitCode}`}`,
    `outcome: ${input.outcome}${report.detail === undefined ? '' : ` (${report.detail})`}`,
    `cost: ${report.costUsd === undefined ? 'unknown' : `$${report.costUsd.toFixed(4)}`}`,
    `tokens: ${report.tokens === undefined ? 'unknown' : JSON.stringify(report.tokens)}`,
    `--- prompt (${request.prompt.length} chars) ---`,
    request.prompt.slice(0, PROMPT_EXCERPT_CHARS),
    ...(request.prompt.length > PROMPT_EXCERPT_CHARS ? ['[... prompt continues ...]'] : []),
    ...renderStream('stdout', run.stdout),
    ...renderStream('stderr', run.stderr),
    ...Object.entries(input.sections ?? {}).flatMap(([name, text]) => [`--- ${name} ---`, text]),
  ];
  return redactor.text(lines.join('\n') + '\n');
}

function renderStream(name: string, capture: CaptureSnapshot): string[] {
  const header = `--- ${name} (${capture.totalBytes} bytes${capture.omittedBytes > 0 ? `, ${capture.omittedBytes} omitted` : ''}) ---`;
  if (capture.omittedBytes === 0) return [header, capture.head + capture.tail];
  return [header, capture.head, `[... ${capture.omittedBytes} bytes omitted ...]`, capture.tail];
}

/**
 * Writes a transcript as `<dir>/<result-file-stem>.log`, or `.2.log`, `.3.log` … when earlier attempts exist;
 * never overwrites. Throws {@link AgentTranscriptError} when the file cannot be written.
 */
export async function writeTranscript(dir: string, resultFile: string, text: string): Promise<string> {
  const stem = basename(resultFile, extname(resultFile)) || 'agent';
  try {
    await mkdir(dir, { recursive: true });
    for (let attempt = 1; ; attempt += 1) {
      const path = join(dir, attempt === 1 ? `${stem}.log` : `${stem}.${attempt}.log`);
      const handle = await open(path, 'wx', 0o600).catch((error: unknown) => {
        if ((error as { code?: string }).code === 'EEXIST') return undefined;
        throw error;
      });
      if (handle === undefined) continue;
      try {
        await handle.writeFile(text, 'utf8');
      } finally {
        await handle.close();
      }
      return path;
    }
  } catch (cause) {
    throw new AgentTranscriptError(dir, cause);
  }
}

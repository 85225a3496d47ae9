import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedactor } from '@allium-loop/ledger';
import { createActivityTracker, type ActivityUpdate } from './agent-activity.js';
import { buildAgentEnv } from './agent-env.js';
import type { ResolvedCommonOptions } from './agent-options.js';
import { decideOutcome, type AgentOutputParser, type AgentReport } from './agent-report.js';
import type { AgentRunner, AgentRunRequest, AgentRunResult } from './agent-runner.js';
import { runProcess } from './process-runner.js';
import { renderTranscript, resolveTranscriptDir, writeTranscript } from './transcript.js';

/** Per-call files the engine prepares: the prompt, and a private scratch folder removed after the call. */
export interface CallFiles {
  readonly promptFile: string;
  readonly scratchDir: string;
}

/** The command line of one call. */
export interface CliInvocation {
  readonly args: readonly string[];
  /** Sent on stdin; without it stdin is empty. */
  readonly stdin?: string;
}

/** What an adapter contributes: its command line, its output parser and its install hint. */
export interface CliAdapterSpec {
  readonly name: string;
  /** Default executable name, overridable by the `binary` option. */
  readonly binary: string;
  /** Shown when the executable is missing. */
  readonly installHint: string;
  /** Auth and config variables the CLI needs, passed through by name. */
  readonly authEnv: readonly string[];
  buildInvocation(request: AgentRunRequest, files: CallFiles): CliInvocation;
  /**
   * The call's output parser. `activity`, when the runtime wants live activity, takes what the parser reads from
   * each streamed event (see `agent-activity.ts`); the final report must not depend on it.
   */
  createParser(
    request: AgentRunRequest,
    files: CallFiles,
    activity?: (update: ActivityUpdate) => void,
  ): AgentOutputParser;
  /** Extra transcript sections read after the call (e.g. Codex's last message file). */
  readSections?(files: CallFiles): Promise<Record<string, string>>;
}

/**
 * Builds an {@link AgentRunner} from an adapter spec: writes the prompt file, runs the CLI through
 * `runProcess` with the minimal environment, parses its output, decides the outcome and writes a redacted
 * transcript. Rejects only for the engine's own errors (missing binary, unwritable transcript).
 */
export function createCliAgentRunner(spec: CliAdapterSpec, common: ResolvedCommonOptions): AgentRunner {
  return {
    name: spec.name,
    run: async (request) => {
      const scratchDir = await mkdtemp(join(tmpdir(), `allium-${spec.name}-`));
      try {
        return await runCall(spec, common, request, {
          scratchDir,
          promptFile: join(scratchDir, 'prompt.md'),
        });
      } finally {
        await rm(scratchDir, { recursive: true, force: true });
      }
    },
  };
}

async function runCall(
  spec: CliAdapterSpec,
  common: ResolvedCommonOptions,
  request: AgentRunRequest,
  files: CallFiles,
): Promise<AgentRunResult> {
  const redactor = createRedactor(common.env);
  // Every prompt passes here on its way to an agent: no secret of the engine's environment (or shaped like one)
  // reaches an agent through it, whatever phase or mode built it.
  const prompt = redactor.text(request.prompt);
  const call: AgentRunRequest = prompt === request.prompt ? request : { ...request, prompt };
  await writeFile(files.promptFile, call.prompt, { encoding: 'utf8', mode: 0o600 });
  const invocation = spec.buildInvocation(call, files);
  const activity =
    common.onActivity === undefined
      ? undefined
      : createActivityTracker({
          cwd: request.cwd,
          prices: common.prices,
          redact: (text) => redactor.text(text),
          onActivity: common.onActivity,
        });
  const parser = spec.createParser(call, files, activity);
  const env = buildAgentEnv(common.env, [...spec.authEnv, ...common.envAllow]);
  const file = common.binary ?? spec.binary;
  const startedAt = new Date();
  const run = await runProcess({
    file,
    args: invocation.args,
    cwd: request.cwd,
    env,
    ...(invocation.stdin === undefined ? {} : { stdin: invocation.stdin }),
    timeoutMs: request.timeoutMs,
    ...(request.signal === undefined ? {} : { signal: request.signal }),
    killGraceMs: common.killGraceMs,
    capture: common.capture,
    onStdoutLine: (line) => parser.onLine(line),
    installHint: spec.installHint,
  });
  const parsed = parser.finish(run);
  // The CLI's words leave the adapter redacted: a detail is journaled, a final message may become a result file.
  const report: AgentReport = {
    ...parsed,
    ...(parsed.detail === undefined ? {} : { detail: redactor.text(parsed.detail) }),
    ...(parsed.finalText === undefined ? {} : { finalText: redactor.text(parsed.finalText) }),
  };
  const outcome = decideOutcome(run, report);
  const sections = (await spec.readSections?.(files)) ?? {};
  const text = renderTranscript(
    {
      adapter: spec.name,
      request: call,
      file,
      args: invocation.args,
      envNames: Object.keys(env),
      startedAt,
      run,
      report,
      outcome,
      sections,
    },
    redactor,
  );
  const transcriptPath = await writeTranscript(
    resolveTranscriptDir(request, common.transcriptDir),
    request.resultFile,
    text,
  );
  return {
    ...usageFields(report),
    outcome,
    exitCode: run.exitCode,
    signal: run.signal,
    durationMs: run.durationMs,
    transcriptPath,
    ...(run.pid === undefined ? {} : { pid: run.pid }),
    output: {
      stdoutBytes: run.stdout.totalBytes,
      stderrBytes: run.stderr.totalBytes,
      omittedBytes: run.stdout.omittedBytes + run.stderr.omittedBytes,
    },
  };
}

function usageFields(report: AgentReport): Partial<AgentRunResult> {
  const fields: { -readonly [K in keyof AgentRunResult]?: AgentRunResult[K] } = {};
  if (report.costUsd !== undefined) fields.costUsd = report.costUsd;
  if (report.tokens !== undefined) fields.tokens = report.tokens;
  if (report.turns !== undefined) fields.turns = report.turns;
  if (report.sessionId !== undefined) fields.sessionId = report.sessionId;
  if (report.rateLimitResetAt !== undefined) fields.rateLimitResetAt = report.rateLimitResetAt;
  if (report.detail !== undefined) fields.detail = report.detail;
  if (report.finalText !== undefined) fields.finalText = report.finalText;
  if (report.authFailure === true && report.outcome === 'api_error') fields.authFailure = true;
  return fields;
}

import { AlliumLoopError } from '@allium-loop/errors';

/** The agent's executable was not found on the PATH given to it. Not retryable: install it or fix `binary`. */
export class AgentBinaryNotFoundError extends AlliumLoopError {
  constructor(binary: string, installHint: string, cause?: unknown) {
    super(`agent executable '${binary}' was not found on PATH`, {
      code: 'agents.binary_not_found',
      retryable: false,
      cause,
      context: { binary },
      hint: installHint,
    });
  }
}

/** The agent process could not be started for another reason (bad cwd, permissions, resources). */
export class AgentSpawnError extends AlliumLoopError {
  constructor(
    message: string,
    options: { cause?: unknown; retryable: boolean; context: Record<string, unknown> },
  ) {
    super(message, { code: 'agents.spawn_failed', ...options });
  }
}

/** An adapter's configuration or a replay script is invalid; the message lists each issue. */
export class AgentConfigError extends AlliumLoopError {
  constructor(message: string, issues: readonly string[], context: Record<string, unknown> = {}) {
    super(`${message}:\n${issues.map((issue) => `  - ${issue}`).join('\n')}`, {
      code: 'agents.invalid_config',
      retryable: false,
      context: { ...context, issues },
      hint: 'See docs/agents.md for the options of each agent kind.',
    });
  }
}

/** The engine could not write the call's transcript or prompt file (disk full, permissions). */
export class AgentTranscriptError extends AlliumLoopError {
  constructor(path: string, cause: unknown) {
    super(`could not write the agent transcript ${path}`, {
      code: 'agents.transcript_failed',
      retryable: true,
      cause,
      context: { path },
    });
  }
}

import { z } from 'zod';
import { commonAgentOptionsSchema, resolveCommonOptions, type AgentRuntime } from './agent-options.js';
import { buildReport } from './agent-report.js';
import type { AgentRunner, AgentRunRequest } from './agent-runner.js';
import { createCliAgentRunner, type CallFiles } from './cli-agent-runner.js';

/** Placeholders a `command` argv may contain. */
export const COMMAND_PLACEHOLDERS = ['prompt_file', 'result_file', 'cwd', 'phase'] as const;

const PLACEHOLDER = /\{([A-Za-z_]+)\}/g;

/** Options of the `command` adapter: any executable, with placeholders in its argv. */
export const commandOptionsSchema = commonAgentOptionsSchema.extend({
  kind: z.literal('command'),
  /** Executable then arguments; `{prompt_file}`, `{result_file}`, `{cwd}`, `{phase}` are substituted. */
  argv: z
    .array(z.string())
    .min(1)
    .refine((argv) => argv[0] !== '', 'the executable must not be empty')
    .superRefine((argv, ctx) => {
      for (const element of argv)
        for (const match of element.matchAll(PLACEHOLDER))
          if (!(COMMAND_PLACEHOLDERS as readonly string[]).includes(match[1]!))
            ctx.addIssue({
              code: 'custom',
              message: `unknown placeholder {${match[1]}}; use ${COMMAND_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
            });
    }),
  /** Whether the prompt is also written to stdin; default true. */
  stdin: z.boolean().optional(),
});

/** Options of the `command` adapter. */
export type CommandOptions = z.infer<typeof commandOptionsSchema>;

/**
 * Substitutes the placeholders inside each argv element. An element stays one argument whatever the values
 * contain (no shell is involved), so paths with spaces or quotes are safe.
 */
export function substituteCommandArgs(
  argv: readonly string[],
  request: AgentRunRequest,
  files: CallFiles,
): string[] {
  const values: Record<string, string> = {
    prompt_file: files.promptFile,
    result_file: request.resultFile,
    cwd: request.cwd,
    phase: request.phase,
  };
  return argv.map((element) => element.replace(PLACEHOLDER, (whole, name: string) => values[name] ?? whole));
}

/** The `command` adapter: exit 0 is `ok`; no usage is read, so the cost stays unknown. */
export function createCommandAgentRunner(options: CommandOptions, runtime?: AgentRuntime): AgentRunner {
  const [executable] = options.argv;
  return createCliAgentRunner(
    {
      name: 'command',
      binary: executable!,
      installHint: `Install the program the command agent runs, or fix the first element of its argv ('${executable}'): it must be on PATH or a path.`,
      authEnv: [],
      buildInvocation: (request, files) => ({
        args: substituteCommandArgs(options.argv, request, files).slice(1),
        ...(options.stdin === false ? {} : { stdin: request.prompt }),
      }),
      createParser: () => ({
        onLine: () => undefined,
        finish: () => buildReport({ finalResult: 'not_applicable' }),
      }),
    },
    resolveCommonOptions(options, runtime),
  );
}

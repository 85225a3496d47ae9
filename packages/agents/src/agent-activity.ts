import { numberOrUndefined, objectOrEmpty, stringOrUndefined } from './agent-report.js';
import type { TokenUsage } from './agent-runner.js';
import { compactUsage, priceTokens, type PriceTable } from './price-table.js';

/**
 * What an agent is doing while its call runs, as far as its CLI streams it: the tool in use, the tokens so far and
 * their estimated price. Delivered through {@link AgentRuntime.onActivity}; never persisted (the transcript and the
 * final report stay the record of a call).
 */
export interface AgentActivity {
  /** The latest tool call, e.g. `Edit src/x.ts`, `Bash npm test`; one line, redacted, at most 80 characters. */
  readonly tool?: string;
  /** Tokens of this call so far (input, output and cache), when the CLI reported any. */
  readonly tokens?: number;
  /** Estimated USD of those tokens, when the model has a price; `undefined` means unknown. */
  readonly costUsd?: number;
}

/** One stream event's contribution to the activity: a tool call started, and/or token usage. */
export interface ActivityUpdate {
  readonly tool?: { readonly name: string; readonly target?: string };
  /**
   * Usage reported by the event. `replace` usage is one model response's whole usage under `id` (Claude repeats a
   * message's usage on each of its content blocks); `add` usage is counted once more (a Codex turn).
   */
  readonly usage?: {
    readonly mode: 'replace' | 'add';
    readonly id?: string;
    readonly model?: string;
    readonly tokens: TokenUsage;
  };
}

/** The argument worth showing for each of Claude Code's tools (a path, a command, a pattern). */
const CLAUDE_TOOL_TARGET: Readonly<Record<string, string>> = {
  Read: 'file_path',
  Write: 'file_path',
  Edit: 'file_path',
  MultiEdit: 'file_path',
  NotebookEdit: 'notebook_path',
  Bash: 'command',
  Grep: 'pattern',
  Glob: 'pattern',
  WebFetch: 'url',
  WebSearch: 'query',
  Task: 'description',
};

/**
 * Reads one event of Claude Code's `stream-json` output: an `assistant` message's last `tool_use` block and the
 * message's usage. Pure; `undefined` for events that say nothing about activity.
 */
export function readClaudeActivity(event: Record<string, unknown>): ActivityUpdate | undefined {
  if (event['type'] !== 'assistant') return undefined;
  const message = objectOrEmpty(event['message']);
  const content = Array.isArray(message['content']) ? (message['content'] as unknown[]) : [];
  let tool: ActivityUpdate['tool'];
  for (const block of content) {
    const part = objectOrEmpty(block);
    const name = stringOrUndefined(part['name']);
    if (part['type'] !== 'tool_use' || name === undefined) continue;
    const key = CLAUDE_TOOL_TARGET[name];
    const target = key === undefined ? undefined : stringOrUndefined(objectOrEmpty(part['input'])[key]);
    tool = target === undefined ? { name } : { name, target };
  }
  const tokens =
    message['usage'] === undefined ? undefined : readClaudeUsage(objectOrEmpty(message['usage']));
  const id = stringOrUndefined(message['id']);
  const model = stringOrUndefined(message['model']);
  return build(
    tool,
    tokens === undefined || Object.keys(tokens).length === 0
      ? undefined
      : {
          mode: 'replace',
          tokens,
          ...(id === undefined ? {} : { id }),
          ...(model === undefined ? {} : { model }),
        },
  );
}

/**
 * Reads one event of `codex exec --json`: an `item.started` command, file change, MCP tool call or web search, and
 * a `turn.completed`'s usage (cached input counted apart, as the final report does). Pure.
 */
export function readCodexActivity(event: Record<string, unknown>): ActivityUpdate | undefined {
  if (event['type'] === 'turn.completed') {
    const tokens = readCodexUsage(objectOrEmpty(event['usage']));
    return Object.keys(tokens).length === 0 ? undefined : { usage: { mode: 'add', tokens } };
  }
  if (event['type'] !== 'item.started') return undefined;
  const item = objectOrEmpty(event['item']);
  switch (item['type']) {
    case 'command_execution':
      return build(withTarget('shell', unwrapShell(stringOrUndefined(item['command']))), undefined);
    case 'file_change': {
      const changes = Array.isArray(item['changes']) ? (item['changes'] as unknown[]) : [];
      const first = objectOrEmpty(changes[0]);
      const more = changes.length > 1 ? ` (+${String(changes.length - 1)})` : '';
      const path = stringOrUndefined(first['path']);
      return build(
        withTarget(
          stringOrUndefined(first['kind']) ?? 'edit',
          path === undefined ? undefined : `${path}${more}`,
        ),
        undefined,
      );
    }
    case 'mcp_tool_call':
      return build(
        withTarget(
          [stringOrUndefined(item['server']), stringOrUndefined(item['tool'])].filter(Boolean).join('.') ||
            'mcp',
          undefined,
        ),
        undefined,
      );
    case 'web_search':
      return build(withTarget('web search', stringOrUndefined(item['query'])), undefined);
    default:
      return undefined;
  }
}

/** Claude's `usage` object (of a message or of the final result). */
export function readClaudeUsage(usage: Record<string, unknown>): TokenUsage {
  return compactUsage({
    input: numberOrUndefined(usage['input_tokens']),
    output: numberOrUndefined(usage['output_tokens']),
    cacheRead: numberOrUndefined(usage['cache_read_input_tokens']),
    cacheWrite: numberOrUndefined(usage['cache_creation_input_tokens']),
  });
}

/** Codex's `usage` of a turn. Codex counts cached tokens inside `input_tokens`; ours keeps them apart. */
export function readCodexUsage(usage: Record<string, unknown>): TokenUsage {
  const input = numberOrUndefined(usage['input_tokens']);
  const cached = numberOrUndefined(usage['cached_input_tokens']);
  return compactUsage({
    input: input === undefined ? undefined : input - (cached ?? 0),
    cacheRead: cached,
    output: numberOrUndefined(usage['output_tokens']),
  });
}

function withTarget(name: string, target: string | undefined): ActivityUpdate['tool'] {
  return target === undefined ? { name } : { name, target };
}

/** `/bin/bash -lc 'npm test'` → `npm test` (Codex wraps every command in a login shell). */
function unwrapShell(command: string | undefined): string | undefined {
  const match = command === undefined ? null : /^\S*\/(?:ba|z)?sh -l?c '(.*)'$/s.exec(command);
  return match === null ? command : match[1];
}

function build(tool: ActivityUpdate['tool'], usage: ActivityUpdate['usage']): ActivityUpdate | undefined {
  if (tool === undefined && usage === undefined) return undefined;
  return { ...(tool === undefined ? {} : { tool }), ...(usage === undefined ? {} : { usage }) };
}

/** Longest tool description shown. */
const MAX_TOOL_CHARS = 80;

/** What {@link createActivityTracker} needs besides the updates. */
export interface ActivityTrackerOptions {
  /** Paths under it are shown relative to it. */
  readonly cwd: string;
  readonly prices: PriceTable;
  /** Masks secrets in the tool description (the call's redactor). */
  readonly redact: (text: string) => string;
  /** Receives the activity whenever it changed. */
  readonly onActivity: (activity: AgentActivity) => void;
}

/**
 * Folds a call's {@link ActivityUpdate}s into its running {@link AgentActivity} and hands it on when it changed.
 * Tool descriptions become one printable line (control characters, which could drive a terminal, are replaced),
 * relative to the working directory, redacted and cut to {@link MAX_TOOL_CHARS}.
 */
export function createActivityTracker(options: ActivityTrackerOptions): (update: ActivityUpdate) => void {
  // Running totals (a call may stream tens of thousands of events): a replaced usage is taken out, then the new one
  // added in. `unpriced` counts the usages whose model has no price.
  const byId = new Map<string, Counted>();
  const totals = { usages: 0, tokens: 0, usd: 0, unpriced: 0 };
  const count = (entry: Counted, sign: 1 | -1): void => {
    totals.usages += sign;
    totals.tokens += sign * entry.tokens;
    if (entry.usd === undefined) totals.unpriced += sign;
    else totals.usd += sign * entry.usd;
  };
  let tool: string | undefined;
  let last = '';
  return (update) => {
    if (update.tool !== undefined) tool = describeTool(update.tool, options);
    if (update.usage !== undefined) {
      const { tokens, model, id, mode } = update.usage;
      const entry: Counted = { tokens: totalTokens(tokens), usd: priceTokens(options.prices, model, tokens) };
      if (mode === 'replace' && id !== undefined) {
        const before = byId.get(id);
        if (before !== undefined) count(before, -1);
        byId.set(id, entry);
      }
      count(entry, 1);
    }
    const activity: AgentActivity = {
      ...(tool === undefined ? {} : { tool }),
      ...(totals.usages === 0 ? {} : { tokens: totals.tokens }),
      ...(totals.usages === 0 || totals.unpriced > 0 ? {} : { costUsd: totals.usd }),
    };
    const key = JSON.stringify(activity);
    if (key === last) return;
    last = key;
    options.onActivity(activity);
  };
}

/** One usage as it counts toward the totals. */
interface Counted {
  readonly tokens: number;
  readonly usd: number | undefined;
}

function totalTokens(tokens: TokenUsage): number {
  return (tokens.input ?? 0) + (tokens.output ?? 0) + (tokens.cacheRead ?? 0) + (tokens.cacheWrite ?? 0);
}

function describeTool(tool: NonNullable<ActivityUpdate['tool']>, options: ActivityTrackerOptions): string {
  const prefix = `${options.cwd.replace(/\/+$/, '')}/`;
  const target =
    tool.target === undefined
      ? undefined
      : (tool.target.startsWith(prefix) ? tool.target.slice(prefix.length) : tool.target).split('\n')[0];
  const text = options.redact(target === undefined || target === '' ? tool.name : `${tool.name} ${target}`);
  const printable = text
    .replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ')
    .replace(/ {2,}/g, ' ')
    .trim();
  return printable.length > MAX_TOOL_CHARS ? `${printable.slice(0, MAX_TOOL_CHARS - 1)}…` : printable;
}

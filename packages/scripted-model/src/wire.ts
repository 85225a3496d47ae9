import type { ToolInvocation } from './plan.js';
import type { TurnUsage } from './script.js';

/** What one request is about, read from either API's body. */
export interface Conversation {
  /** All user-authored text (the prompt, and whatever the CLI adds as user text). */
  readonly userText: string;
  /** System / instructions text. */
  readonly systemText: string;
  readonly model: string;
  readonly stream: boolean;
  readonly tools: ReadonlyMap<string, 'function' | 'custom'>;
  /** The ids of the tool calls this server made earlier in the conversation, in order. */
  readonly ownToolIds: readonly string[];
}

/** One turn the server answers with: a tool call or the final text. */
export type TurnReply =
  | { readonly kind: 'tool'; readonly id: string; readonly invocation: ToolInvocation }
  | { readonly kind: 'text'; readonly text: string };

/** An SSE event: its name and JSON data. */
export interface SseEvent {
  readonly event: string;
  readonly data: unknown;
}

/** Formats one SSE event. */
export function sse(event: SseEvent): string {
  return `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

function textOf(content: unknown, types: readonly string[]): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((b): b is Record<string, unknown> => typeof b === 'object' && b !== null)
    .filter((b) => types.includes(String(b['type'])) && typeof b['text'] === 'string')
    .map((b) => b['text'] as string)
    .join('\n');
}

function objects(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value)
    ? value.filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null)
    : [];
}

/** Reads an Anthropic Messages API request body. */
export function readAnthropic(body: Record<string, unknown>, ownId: RegExp): Conversation {
  const messages = objects(body['messages']);
  const userText = messages
    .filter((m) => m['role'] === 'user')
    .map((m) => textOf(m['content'], ['text']))
    .join('\n');
  const ownToolIds = messages
    .filter((m) => m['role'] === 'assistant')
    .flatMap((m) => objects(m['content']))
    .filter((b) => b['type'] === 'tool_use' && typeof b['id'] === 'string' && ownId.test(b['id']))
    .map((b) => b['id'] as string);
  const tools = new Map<string, 'function' | 'custom'>();
  for (const tool of objects(body['tools']))
    if (typeof tool['name'] === 'string') tools.set(tool['name'], 'function');
  return {
    userText,
    systemText: [
      textOf(body['system'], ['text']),
      ...messages.filter((m) => m['role'] === 'system').map((m) => textOf(m['content'], ['text'])),
    ].join('\n'),
    model: typeof body['model'] === 'string' ? body['model'] : 'unknown',
    stream: body['stream'] === true,
    tools,
    ownToolIds,
  };
}

/** Reads an OpenAI Responses API request body. */
export function readResponses(body: Record<string, unknown>, ownId: RegExp): Conversation {
  const input =
    typeof body['input'] === 'string' ? [{ role: 'user', content: body['input'] }] : objects(body['input']);
  const userText = input
    .filter((item) => item['role'] === 'user')
    .map((item) => textOf(item['content'], ['input_text', 'text']))
    .join('\n');
  const ownToolIds = input
    .filter((item) => item['type'] === 'function_call' || item['type'] === 'custom_tool_call')
    .map((item) => item['call_id'])
    .filter((id): id is string => typeof id === 'string' && ownId.test(id));
  const tools = new Map<string, 'function' | 'custom'>();
  for (const tool of objects(body['tools'])) {
    const name = tool['name'];
    if (typeof name === 'string') tools.set(name, tool['type'] === 'custom' ? 'custom' : 'function');
    else if (typeof tool['type'] === 'string') tools.set(tool['type'], 'function');
  }
  return {
    userText,
    systemText: typeof body['instructions'] === 'string' ? body['instructions'] : '',
    model: typeof body['model'] === 'string' ? body['model'] : 'unknown',
    stream: body['stream'] !== false,
    tools,
    ownToolIds,
  };
}

const chunk = (text: string, size: number): string[] => {
  const parts: string[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size));
  return parts.length === 0 ? [''] : parts;
};

/** The Anthropic events of one streamed turn. */
export function anthropicEvents(
  reply: TurnReply,
  model: string,
  usage: TurnUsage,
  messageId: string,
): SseEvent[] {
  const start: SseEvent = {
    event: 'message_start',
    data: {
      type: 'message_start',
      message: {
        id: messageId,
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input,
          output_tokens: 1,
          cache_creation_input_tokens: usage.cacheWrite ?? 0,
          cache_read_input_tokens: usage.cacheRead ?? 0,
        },
      },
    },
  };
  const block =
    reply.kind === 'tool'
      ? { type: 'tool_use', id: reply.id, name: reply.invocation.tool, input: {} }
      : { type: 'text', text: '' };
  const deltas: SseEvent[] =
    reply.kind === 'tool'
      ? chunk(JSON.stringify(reply.invocation.input), 512).map((part) => ({
          event: 'content_block_delta',
          data: {
            type: 'content_block_delta',
            index: 0,
            delta: { type: 'input_json_delta', partial_json: part },
          },
        }))
      : chunk(reply.text, 1024).map((part) => ({
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: part } },
        }));
  return [
    start,
    { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: block } },
    ...deltas,
    { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
    {
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: reply.kind === 'tool' ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
    },
    { event: 'message_stop', data: { type: 'message_stop' } },
  ];
}

/** The Anthropic non-streaming body of one turn. */
export function anthropicMessage(
  reply: TurnReply,
  model: string,
  usage: TurnUsage,
  messageId: string,
): unknown {
  return {
    id: messageId,
    type: 'message',
    role: 'assistant',
    model,
    content:
      reply.kind === 'tool'
        ? [{ type: 'tool_use', id: reply.id, name: reply.invocation.tool, input: reply.invocation.input }]
        : [{ type: 'text', text: reply.text }],
    stop_reason: reply.kind === 'tool' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: usage.input,
      output_tokens: usage.output,
      cache_creation_input_tokens: usage.cacheWrite ?? 0,
      cache_read_input_tokens: usage.cacheRead ?? 0,
    },
  };
}

/** The Anthropic error body. */
export function anthropicError(type: string, message: string): unknown {
  return { type: 'error', error: { type, message } };
}

function responsesItem(reply: TurnReply, itemId: string): Record<string, unknown> {
  if (reply.kind === 'text')
    return {
      type: 'message',
      id: itemId,
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: reply.text, annotations: [] }],
    };
  const { invocation } = reply;
  return invocation.freeform === true
    ? {
        type: 'custom_tool_call',
        id: itemId,
        call_id: reply.id,
        name: invocation.tool,
        input: invocation.input,
        status: 'completed',
      }
    : {
        type: 'function_call',
        id: itemId,
        call_id: reply.id,
        name: invocation.tool,
        arguments: JSON.stringify(invocation.input),
        status: 'completed',
      };
}

/** The usage object of a Responses API `response.completed` event (cached tokens count inside `input_tokens`). */
export function responsesUsage(usage: TurnUsage): Record<string, unknown> {
  const input = usage.input + (usage.cacheRead ?? 0);
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheRead ?? 0 },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + usage.output,
  };
}

/** The Responses API events of one streamed turn (Codex wants `output_item.added` before any text delta). */
export function responsesEvents(
  reply: TurnReply,
  model: string,
  usage: TurnUsage,
  responseId: string,
): SseEvent[] {
  const itemId = `${reply.kind === 'text' ? 'msg' : 'fc'}_${responseId}`;
  const item = responsesItem(reply, itemId);
  const base = { id: responseId, object: 'response', model, created_at: 0 };
  const events: SseEvent[] = [
    {
      event: 'response.created',
      data: { type: 'response.created', response: { ...base, status: 'in_progress', output: [] } },
    },
  ];
  if (reply.kind === 'text') {
    events.push({
      event: 'response.output_item.added',
      data: {
        type: 'response.output_item.added',
        output_index: 0,
        item: { ...item, status: 'in_progress', content: [] },
      },
    });
    for (const part of chunk(reply.text, 1024))
      events.push({
        event: 'response.output_text.delta',
        data: {
          type: 'response.output_text.delta',
          item_id: itemId,
          output_index: 0,
          content_index: 0,
          delta: part,
        },
      });
  } else {
    events.push({
      event: 'response.output_item.added',
      data: { type: 'response.output_item.added', output_index: 0, item },
    });
  }
  events.push({
    event: 'response.output_item.done',
    data: { type: 'response.output_item.done', output_index: 0, item },
  });
  events.push({
    event: 'response.completed',
    data: {
      type: 'response.completed',
      response: { ...base, status: 'completed', output: [item], usage: responsesUsage(usage) },
    },
  });
  return events;
}

/** The Responses API error body. */
export function responsesError(code: string, message: string): unknown {
  return { error: { type: code, code, message, param: null } };
}

/**
 * Reads a Gemini API request (`POST /v1beta/models/<model>:generateContent` or `:streamGenerateContent`): user
 * text parts, `systemInstruction`, `tools[].functionDeclarations`, and the ids of this server's earlier
 * `functionCall` parts (Gemini CLI sends them back with the history).
 */
export function readGemini(body: Record<string, unknown>, path: string, ownId: RegExp): Conversation {
  const contents = objects(body['contents']);
  const partsOf = (content: Record<string, unknown>): Record<string, unknown>[] => objects(content['parts']);
  const userText = contents
    .filter((c) => c['role'] === 'user' || c['role'] === undefined)
    .flatMap(partsOf)
    .filter((p) => typeof p['text'] === 'string')
    .map((p) => p['text'] as string)
    .join('\n');
  const ownToolIds = contents
    .filter((c) => c['role'] === 'model')
    .flatMap(partsOf)
    .map((p) => objectOf(p['functionCall'])['id'])
    .filter((id): id is string => typeof id === 'string' && ownId.test(id));
  const tools = new Map<string, 'function' | 'custom'>();
  for (const tool of objects(body['tools']))
    for (const declaration of objects(tool['functionDeclarations']))
      if (typeof declaration['name'] === 'string') tools.set(declaration['name'], 'function');
  const system = objectOf(body['systemInstruction']);
  return {
    userText,
    systemText: objects(system['parts'])
      .map((p) => (typeof p['text'] === 'string' ? p['text'] : ''))
      .join('\n'),
    model: /\/models\/([^:/]+):/.exec(path)?.[1] ?? 'unknown',
    stream: path.includes(':streamGenerateContent'),
    tools,
    ownToolIds,
  };
}

function objectOf(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** The Gemini `usageMetadata` of one turn (cached tokens count inside `promptTokenCount`). */
export function geminiUsage(usage: TurnUsage): Record<string, unknown> {
  const prompt = usage.input + (usage.cacheRead ?? 0);
  return {
    promptTokenCount: prompt,
    candidatesTokenCount: usage.output,
    totalTokenCount: prompt + usage.output,
    ...(usage.cacheRead === undefined || usage.cacheRead === 0
      ? {}
      : { cachedContentTokenCount: usage.cacheRead }),
  };
}

/**
 * The Gemini response chunks of one turn: text in pieces, or one `functionCall` part; the last chunk carries
 * `finishReason: STOP` and the usage. Non-streaming answers are the chunks merged into one.
 */
export function geminiChunks(
  reply: TurnReply,
  model: string,
  usage: TurnUsage,
  responseId: string,
): Record<string, unknown>[] {
  const base = { modelVersion: model, responseId };
  const candidate = (parts: unknown[], finish: boolean): Record<string, unknown> => ({
    content: { role: 'model', parts },
    index: 0,
    ...(finish ? { finishReason: 'STOP' } : {}),
  });
  if (reply.kind === 'tool')
    return [
      {
        candidates: [
          candidate(
            [{ functionCall: { id: reply.id, name: reply.invocation.tool, args: reply.invocation.input } }],
            true,
          ),
        ],
        usageMetadata: geminiUsage(usage),
        ...base,
      },
    ];
  const pieces = chunk(reply.text, 1024);
  return pieces.map((text, i) => {
    const last = i === pieces.length - 1;
    return {
      candidates: [candidate([{ text }], last)],
      ...(last ? { usageMetadata: geminiUsage(usage) } : {}),
      ...base,
    };
  });
}

/** One Gemini SSE line (`alt=sse`: data only, no event names). */
export function geminiSse(data: unknown): string {
  return `data: ${JSON.stringify(data)}\r\n\r\n`;
}

/** The Google API error body (`google.rpc.Status`), with a `RetryInfo` detail for a 429. */
export function geminiError(code: number, message: string, retryAfterSeconds?: number): unknown {
  const status =
    { 400: 'INVALID_ARGUMENT', 401: 'UNAUTHENTICATED', 403: 'PERMISSION_DENIED', 429: 'RESOURCE_EXHAUSTED' }[
      code
    ] ?? 'INTERNAL';
  return {
    error: {
      code,
      message,
      status,
      ...(retryAfterSeconds === undefined
        ? {}
        : {
            details: [
              {
                '@type': 'type.googleapis.com/google.rpc.RetryInfo',
                retryDelay: `${String(retryAfterSeconds)}s`,
              },
            ],
          }),
    },
  };
}

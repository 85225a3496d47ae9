import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PlanError, planForClaude, planForCodex, planForGemini, type ToolInvocation } from './plan.js';
import {
  DEFAULT_TURN_USAGE,
  ScriptPlayer,
  workdirOf,
  type ScriptedCall,
  type ScriptedFault,
  type TurnUsage,
} from './script.js';
import {
  anthropicError,
  anthropicEvents,
  anthropicMessage,
  geminiChunks,
  geminiError,
  geminiSse,
  readAnthropic,
  readGemini,
  readResponses,
  responsesError,
  responsesEvents,
  sse,
  type Conversation,
  type SseEvent,
  type TurnReply,
} from './wire.js';

/** Which wire protocol a request used. */
export type ModelApi = 'anthropic' | 'responses' | 'gemini' | 'other';

/** The APIs the server plays scripts on. */
type ScriptedApi = Exclude<ModelApi, 'other'>;

/** `…/models/<model>:generateContent`, `:streamGenerateContent` or `:countTokens` (Gemini API). */
const GEMINI_PATH = /\/models\/[^/:]+:(generateContent|streamGenerateContent|countTokens)$/;

/** One request the server received, as tests see it. Auth headers are reduced to which one was sent. */
export interface RecordedRequest {
  readonly seq: number;
  readonly method: string;
  readonly path: string;
  readonly api: ModelApi;
  /** `x-api-key`, `bearer`, or `none`: never the key itself. */
  readonly auth: 'x-api-key' | 'bearer' | 'none';
  readonly body: unknown;
  /** The index of the scripted call this request belonged to; absent for unmatched and side requests. */
  readonly callIndex?: number;
  readonly callName?: string;
  /** The model turn within the call (0 = first). */
  readonly turn?: number;
  /** The tool this turn asked for, or `text` for the final answer. */
  readonly reply?: string;
  readonly fault?: ScriptedFault['kind'];
  /** Tokens the server reported for this turn (`input` excludes cache reads). */
  readonly usage?: TurnUsage;
  /** True when the request offered tools but no scripted call matched it (a script gap). */
  readonly unmatched?: boolean;
  readonly status: number;
  /** Why the server could not play the script for this request. */
  readonly error?: string;
}

/** Options of {@link startScriptedModel}. */
export interface ScriptedModelOptions {
  readonly script?: readonly ScriptedCall[];
  /** The agent's working directory, when the CLI does not announce it (relative write paths need one). */
  readonly workdir?: string;
  /** Text answered to requests no call matches (side requests such as titles); default `ok`. */
  readonly unmatchedText?: string;
}

/** A running scripted model server. */
export interface ScriptedModelServer {
  /** `http://127.0.0.1:<port>`: the Anthropic base URL (`ANTHROPIC_BASE_URL`). */
  readonly url: string;
  /** `<url>/v1`: the OpenAI-style base URL (Codex `base_url`). */
  readonly openaiBaseUrl: string;
  /** The Gemini API base URL (`GOOGLE_GEMINI_BASE_URL`): the same as `url`; the CLI adds `/v1beta/models/…`. */
  readonly geminiBaseUrl: string;
  /** Every request so far, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Replaces the script (and forgets which calls were used); the request log is kept. */
  setScript(script: readonly ScriptedCall[]): void;
  /** Clears the request log. */
  clearRequests(): void;
  /** Scripted calls not used yet (excluding `repeat` calls). */
  unusedCalls(): ScriptedCall[];
  /** Tokens reported for one scripted call, summed over its turns (`input` excludes cache reads). */
  usageOfCall(callIndex: number): Required<TurnUsage>;
  /** Resolves when some request satisfies `predicate` (checked on every new request). */
  waitForRequest(predicate: (request: RecordedRequest) => boolean): Promise<RecordedRequest>;
  /** Stops listening and ends open (stalled) responses. */
  close(): Promise<void>;
}

/** Sends a JSON response with a status and extra headers. */
type SendJson = (status: number, body: unknown, headers?: Record<string, string>) => void;

/** The ids this server gives its tool calls: `toolu_sm<call>t<turn>` / `call_sm<call>t<turn>`. */
const OWN_ID = /^(?:toolu|call)_sm(\d+)t(\d+)$/;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function authOf(req: IncomingMessage): RecordedRequest['auth'] {
  if (req.headers['x-api-key'] !== undefined) return 'x-api-key';
  if (/^bearer /i.test(req.headers.authorization ?? '')) return 'bearer';
  return 'none';
}

/**
 * Starts the scripted model on 127.0.0.1 at a random port. It answers `POST /v1/messages` (Anthropic,
 * streamed or not), `POST /v1/messages/count_tokens` and `POST /v1/responses` (OpenAI Responses, streamed),
 * and `HEAD`/`GET` probes with 200. See the package README for the script format.
 */
export async function startScriptedModel(options: ScriptedModelOptions = {}): Promise<ScriptedModelServer> {
  const player = new ScriptPlayer(options.script ?? []);
  const requests: RecordedRequest[] = [];
  const waiters: { predicate: (r: RecordedRequest) => boolean; resolve: (r: RecordedRequest) => void }[] = [];
  const open = new Set<ServerResponse>();
  /** Calls started but not answered with their final text, by conversation text: a retry replays the same call. */
  const unfinished = new Map<string, number>();
  /** How often each call's fault has been played (for `fault.times`). */
  const faultsPlayed = new Map<number, number>();
  let seq = 0;

  const record = (entry: RecordedRequest): void => {
    requests.push(entry);
    for (const waiter of [...waiters])
      if (waiter.predicate(entry)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(entry);
      }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const base = { seq: seq++, method: req.method ?? 'GET', path, auth: authOf(req) };
    const json = (status: number, body: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST') {
      record({ ...base, api: 'other', body: undefined, status: 200 });
      json(200, {});
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      record({ ...base, api: 'other', body: text.slice(0, 1000), status: 400, error: 'body is not JSON' });
      json(400, { error: { message: 'body is not JSON' } });
      return;
    }
    if (path.endsWith('/messages/count_tokens')) {
      const tokens = Math.max(1, Math.ceil(text.length / 4));
      record({ ...base, api: 'anthropic', body, status: 200 });
      json(200, { input_tokens: tokens });
      return;
    }
    const gemini = GEMINI_PATH.exec(path)?.[1];
    if (gemini === 'countTokens') {
      record({ ...base, api: 'gemini', body, status: 200 });
      json(200, { totalTokens: Math.max(1, Math.ceil(text.length / 4)) });
      return;
    }
    const api: ModelApi =
      gemini !== undefined
        ? 'gemini'
        : path.endsWith('/messages')
          ? 'anthropic'
          : path.endsWith('/responses')
            ? 'responses'
            : 'other';
    if (api === 'other') {
      record({ ...base, api, body, status: 404, error: `unknown path ${path}` });
      json(404, { error: { message: `unknown path ${path}` } });
      return;
    }
    const conversation =
      api === 'anthropic'
        ? readAnthropic(body, OWN_ID)
        : api === 'gemini'
          ? readGemini(body, path, OWN_ID)
          : readResponses(body, OWN_ID);
    await answer(api, conversation, body, base, res, json);
  };

  const answer = async (
    api: ScriptedApi,
    conversation: Conversation,
    body: Record<string, unknown>,
    base: { seq: number; method: string; path: string; auth: RecordedRequest['auth'] },
    res: ServerResponse,
    json: SendJson,
  ): Promise<void> => {
    const last = conversation.ownToolIds.at(-1);
    const own = last === undefined ? undefined : OWN_ID.exec(last);
    let callIndex: number | undefined;
    let turn = 0;
    if (own !== null && own !== undefined) {
      callIndex = Number(own[1]);
      turn = Number(own[2]) + 1;
    } else if (conversation.tools.size > 0) {
      callIndex = unfinished.get(conversation.userText) ?? player.take(conversation.userText);
      if (callIndex !== undefined) unfinished.set(conversation.userText, callIndex);
    }
    const call = callIndex === undefined ? undefined : player.call(callIndex);
    const messageId = `${api === 'anthropic' ? 'msg' : 'resp'}_sm${base.seq}`;
    if (call === undefined || callIndex === undefined) {
      const reply: TurnReply = { kind: 'text', text: options.unmatchedText ?? 'ok' };
      const usage = { input: 0, output: 0 };
      record({
        ...base,
        api,
        body,
        status: 200,
        usage,
        reply: 'text',
        ...(conversation.tools.size > 0 ? { unmatched: true } : {}),
      });
      sendTurn(api, conversation, reply, usage, messageId, res);
      return;
    }
    const usage = call.usage ?? DEFAULT_TURN_USAGE;
    const played = faultsPlayed.get(callIndex) ?? 0;
    const fault =
      call.fault !== undefined &&
      turn >= (call.fault.atTurn ?? 0) &&
      (call.fault.times === undefined || played < call.fault.times)
        ? call.fault
        : undefined;
    const entry = {
      ...base,
      api,
      body,
      callIndex,
      turn,
      ...(call.name === undefined ? {} : { callName: call.name }),
    };
    if (fault !== undefined && fault.kind !== 'long_stream') {
      faultsPlayed.set(callIndex, played + 1);
      playFault(api, fault, conversation, messageId, res, json);
      const status = {
        stall: 200,
        rate_limit: 429,
        unauthorized: 401,
        server_error: 500,
        malformed_sse: 200,
      }[fault.kind];
      record({ ...entry, fault: fault.kind, status });
      return;
    }
    let plan: ToolInvocation[];
    try {
      const context = {
        workdir: options.workdir ?? workdirOf(`${conversation.systemText}\n${conversation.userText}`),
        prompt: conversation.userText,
        tools: conversation.tools,
      };
      plan =
        api === 'anthropic'
          ? planForClaude(call.actions ?? [], context)
          : api === 'gemini'
            ? planForGemini(call.actions ?? [], context)
            : planForCodex(call.actions ?? [], context);
    } catch (error) {
      if (!(error instanceof PlanError)) throw error;
      record({ ...entry, status: 500, error: error.message });
      json(
        500,
        api === 'anthropic'
          ? anthropicError('api_error', error.message)
          : api === 'gemini'
            ? geminiError(500, error.message)
            : responsesError('server_error', error.message),
      );
      return;
    }
    const step = plan[turn];
    const idPrefix = api === 'anthropic' ? 'toolu' : 'call';
    const reply: TurnReply =
      step === undefined
        ? {
            kind: 'text',
            text: fault?.kind === 'long_stream' ? 'x'.repeat(fault.bytes) : (call.finalText ?? 'done'),
          }
        : { kind: 'tool', id: `${idPrefix}_sm${callIndex}t${turn}`, invocation: step };
    if (reply.kind === 'text')
      for (const [text, index] of unfinished) if (index === callIndex) unfinished.delete(text);
    record({
      ...entry,
      status: 200,
      usage,
      reply: reply.kind === 'tool' ? reply.invocation.tool : 'text',
      ...(fault === undefined ? {} : { fault: fault.kind }),
    });
    sendTurn(api, conversation, reply, usage, messageId, res);
  };

  const writeEvents = (res: ServerResponse, events: readonly SseEvent[]): void => {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
    });
    for (const event of events) res.write(sse(event));
    res.end();
  };

  const sendTurn = (
    api: ScriptedApi,
    conversation: Conversation,
    reply: TurnReply,
    usage: TurnUsage,
    messageId: string,
    res: ServerResponse,
  ): void => {
    if (api === 'gemini') {
      const chunks = geminiChunks(reply, conversation.model, usage, messageId);
      if (!conversation.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(mergeGeminiChunks(chunks)));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const data of chunks) res.write(geminiSse(data));
      res.end();
      return;
    }
    if (api === 'anthropic' && !conversation.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(anthropicMessage(reply, conversation.model, usage, messageId)));
      return;
    }
    writeEvents(
      res,
      api === 'anthropic'
        ? anthropicEvents(reply, conversation.model, usage, messageId)
        : responsesEvents(reply, conversation.model, usage, messageId),
    );
  };

  const playFault = (
    api: ScriptedApi,
    fault: ScriptedFault,
    conversation: Conversation,
    messageId: string,
    res: ServerResponse,
    json: SendJson,
  ): void => {
    if (api === 'gemini') {
      playGeminiFault(fault, conversation, messageId, res, json);
      return;
    }
    const error = (type: string, message: string): unknown =>
      api === 'anthropic' ? anthropicError(type, message) : responsesError(type, message);
    switch (fault.kind) {
      case 'rate_limit':
        json(429, error('rate_limit_error', 'Rate limit reached: too many requests (scripted).'), {
          'retry-after': String(fault.retryAfterSeconds),
        });
        return;
      case 'unauthorized':
        json(401, error('authentication_error', 'invalid x-api-key (scripted)'));
        return;
      case 'server_error':
        json(500, error('api_error', 'Internal server error (scripted)'));
        return;
      case 'malformed_sse':
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end(
          `event: ${api === 'anthropic' ? 'message_start' : 'response.created'}\ndata: {"type": not json\n\n`,
        );
        return;
      case 'stall': {
        const first = (
          api === 'anthropic'
            ? anthropicEvents({ kind: 'text', text: '' }, conversation.model, DEFAULT_TURN_USAGE, messageId)
            : responsesEvents({ kind: 'text', text: '' }, conversation.model, DEFAULT_TURN_USAGE, messageId)
        )[0]!;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(sse(first));
        open.add(res);
        res.on('close', () => open.delete(res));
        return;
      }
      case 'long_stream':
        return;
    }
  };

  const playGeminiFault = (
    fault: ScriptedFault,
    conversation: Conversation,
    messageId: string,
    res: ServerResponse,
    json: SendJson,
  ): void => {
    switch (fault.kind) {
      case 'rate_limit':
        json(429, geminiError(429, 'Resource has been exhausted (scripted).', fault.retryAfterSeconds), {
          'retry-after': String(fault.retryAfterSeconds),
        });
        return;
      case 'unauthorized':
        json(401, geminiError(401, 'API key not valid. Please pass a valid API key. (scripted)'));
        return;
      case 'server_error':
        json(500, geminiError(500, 'Internal error encountered. (scripted)'));
        return;
      case 'malformed_sse':
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: {"candidates": not json\r\n\r\n');
        return;
      case 'stall': {
        const first = geminiChunks(
          { kind: 'text', text: '' },
          conversation.model,
          DEFAULT_TURN_USAGE,
          messageId,
        )[0];
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.write(
          geminiSse({
            ...first,
            candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, index: 0 }],
          }),
        );
        open.add(res);
        res.on('close', () => open.delete(res));
        return;
      }
      case 'long_stream':
        return;
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      record({
        seq: seq++,
        method: req.method ?? '?',
        path: req.url ?? '?',
        api: 'other',
        auth: authOf(req),
        body: undefined,
        status: 500,
        error: String(error),
      });
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    geminiBaseUrl: url,
    requests,
    setScript: (script) => {
      player.reset(script);
      unfinished.clear();
      faultsPlayed.clear();
    },
    clearRequests: () => {
      requests.length = 0;
    },
    unusedCalls: () => player.unused(),
    usageOfCall: (callIndex) => {
      const total = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 };
      for (const r of requests)
        if (r.callIndex === callIndex && r.usage !== undefined) {
          total.input += r.usage.input;
          total.output += r.usage.output;
          total.cacheRead += r.usage.cacheRead ?? 0;
          total.cacheWrite += r.usage.cacheWrite ?? 0;
        }
      return total;
    },
    waitForRequest: (predicate) => {
      const found = requests.find(predicate);
      if (found !== undefined) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    close: async () => {
      for (const res of open) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A non-streaming Gemini answer: the chunks' parts in one candidate, with the last chunk's finish and usage. */
function mergeGeminiChunks(chunks: readonly Record<string, unknown>[]): Record<string, unknown> {
  const last = chunks.at(-1) ?? {};
  const parts = chunks.flatMap((c) => {
    const candidate = (c['candidates'] as { content: { parts: unknown[] } }[] | undefined)?.[0];
    return candidate?.content.parts ?? [];
  });
  const lastCandidate = (last['candidates'] as Record<string, unknown>[] | undefined)?.[0] ?? {};
  return { ...last, candidates: [{ ...lastCandidate, content: { role: 'model', parts } }] };
}

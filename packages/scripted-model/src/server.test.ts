import { afterEach, describe, expect, it } from 'vitest';
import { startScriptedModel, type ScriptedModelServer } from './server.js';
import type { ScriptedCall } from './script.js';

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const WORKDIR = '/tmp/scripted-project';
const TOOLS = ['Read', 'Write', 'Edit', 'Bash'].map((name) => ({ name, input_schema: { type: 'object' } }));
const PROMPT =
  '# Phase: implement — make it pass\n\nwrite a JSON document to `.allium-loop/x/results/1-implement.json` (relative)';

async function start(script: ScriptedCall[]): Promise<ScriptedModelServer> {
  server = await startScriptedModel({ script, workdir: WORKDIR });
  return server;
}

/** Parses an SSE body into its events' data objects. */
function events(text: string): Record<string, unknown>[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as Record<string, unknown>);
}

async function messages(url: string, body: Record<string, unknown>): Promise<Response> {
  return fetch(`${url}/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'secret-key-value' },
    body: JSON.stringify({ model: 'claude-test', tools: TOOLS, ...body }),
  });
}

/** The tool_use block a streamed Anthropic turn carries, with its input re-assembled from the deltas. */
function toolUseOf(evs: Record<string, unknown>[]): {
  id: string;
  name: string;
  input: Record<string, unknown>;
} {
  const start = evs.find((e) => e['type'] === 'content_block_start')!['content_block'] as Record<
    string,
    string
  >;
  const json = evs
    .filter((e) => e['type'] === 'content_block_delta')
    .map((e) => (e['delta'] as Record<string, string>)['partial_json'])
    .join('');
  return { id: start['id']!, name: start['name']!, input: JSON.parse(json) as Record<string, unknown> };
}

describe('the Anthropic Messages API', () => {
  it('plays a call turn by turn: Read then Write, Read then Edit, Bash, the result file, then the final text', async () => {
    const s = await start([
      {
        match: '# Phase: implement',
        actions: [
          { kind: 'write', path: 'src/a.js', content: 'one\n' },
          { kind: 'edit', path: 'src/a.js', oldText: 'one\n', newText: 'two\n' },
          { kind: 'shell', command: 'node --test' },
          { kind: 'result', value: { phase: 'implement' } },
        ],
        finalText: 'finished',
        usage: { input: 100, output: 10, cacheRead: 5, cacheWrite: 2 },
      },
    ]);
    const history: Record<string, unknown>[] = [{ role: 'user', content: [{ type: 'text', text: PROMPT }] }];
    const seen: string[] = [];
    for (let turn = 0; turn < 20; turn += 1) {
      const response = await messages(s.url, { stream: true, messages: history });
      expect(response.status).toBe(200);
      const evs = events(await response.text());
      expect(evs[0]!['type']).toBe('message_start');
      expect(evs.at(-1)!['type']).toBe('message_stop');
      const block = (
        evs.find((e) => e['type'] === 'content_block_start')!['content_block'] as Record<string, string>
      )['type'];
      if (block === 'text') {
        const text = evs
          .filter((e) => e['type'] === 'content_block_delta')
          .map((e) => (e['delta'] as Record<string, string>)['text'])
          .join('');
        expect(text).toBe('finished');
        break;
      }
      const tool = toolUseOf(evs);
      seen.push(`${tool.name} ${JSON.stringify(tool.input)}`);
      history.push({
        role: 'assistant',
        content: [{ type: 'tool_use', id: tool.id, name: tool.name, input: tool.input }],
      });
      history.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: tool.id, content: 'ok' }] });
    }
    expect(seen).toEqual([
      `Read {"file_path":"${WORKDIR}/src/a.js"}`,
      `Write {"file_path":"${WORKDIR}/src/a.js","content":"one\\n"}`,
      `Read {"file_path":"${WORKDIR}/src/a.js"}`,
      `Edit {"file_path":"${WORKDIR}/src/a.js","old_string":"one\\n","new_string":"two\\n"}`,
      'Bash {"command":"node --test","description":"Run a command"}',
      `Read {"file_path":"${WORKDIR}/.allium-loop/x/results/1-implement.json"}`,
      `Write {"file_path":"${WORKDIR}/.allium-loop/x/results/1-implement.json","content":"{\\n  \\"phase\\": \\"implement\\"\\n}\\n"}`,
    ]);
    // Seven tool turns and the final text, each reporting the scripted usage; the key is never recorded.
    expect(s.usageOfCall(0)).toEqual({ input: 800, output: 80, cacheRead: 40, cacheWrite: 16 });
    expect(s.requests.every((r) => r.auth === 'x-api-key')).toBe(true);
    expect(JSON.stringify(s.requests)).not.toContain('secret-key-value');
    expect(s.unusedCalls()).toEqual([]);
  });

  it('answers non-streaming requests with a whole message and its usage', async () => {
    const s = await start([{ match: 'hello', finalText: 'hi there', usage: { input: 7, output: 3 } }]);
    const response = await messages(s.url, { stream: false, messages: [{ role: 'user', content: 'hello' }] });
    const body = (await response.json()) as Record<string, unknown>;
    expect(body['content']).toEqual([{ type: 'text', text: 'hi there' }]);
    expect(body['usage']).toMatchObject({ input_tokens: 7, output_tokens: 3 });
    expect(body['stop_reason']).toBe('end_turn');
  });

  it('counts tokens, answers probes, and gives unmatched or tool-less requests a plain answer with zero usage', async () => {
    const s = await start([{ match: 'only this', finalText: 'x' }]);
    const count = await fetch(`${s.url}/v1/messages/count_tokens`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'abcdefgh' }] }),
    });
    expect(((await count.json()) as Record<string, number>)['input_tokens']).toBeGreaterThan(0);
    expect((await fetch(`${s.url}/api/hello`, { method: 'HEAD' })).status).toBe(200);
    const side = await messages(s.url, {
      stream: false,
      tools: [],
      messages: [{ role: 'user', content: 'only this' }],
    });
    expect(((await side.json()) as Record<string, unknown>)['content']).toEqual([
      { type: 'text', text: 'ok' },
    ]);
    const gap = await messages(s.url, {
      stream: false,
      messages: [{ role: 'user', content: 'something else' }],
    });
    expect(gap.status).toBe(200);
    expect(s.requests.filter((r) => r.unmatched === true)).toHaveLength(1);
    // The scripted call is still there for the real request.
    expect(s.unusedCalls()).toHaveLength(1);
  });

  it('plays calls in order: the Nth matching conversation gets the Nth matching call; repeat calls stay', async () => {
    const s = await start([
      { match: 'weed', finalText: 'first weed' },
      { match: 'weed', finalText: 'later weeds', repeat: true },
    ]);
    const answer = async () => {
      const r = await messages(s.url, {
        stream: false,
        messages: [{ role: 'user', content: '# Phase: weed' }],
      });
      return (((await r.json()) as Record<string, unknown>)['content'] as { text: string }[])[0]!.text;
    };
    expect([await answer(), await answer(), await answer()]).toEqual([
      'first weed',
      'later weeds',
      'later weeds',
    ]);
  });

  it('fails loudly when a write needs a working directory the request does not name', async () => {
    server = await startScriptedModel({
      script: [{ match: 'x', actions: [{ kind: 'write', path: 'a', content: '' }] }],
    });
    const r = await messages(server.url, { stream: true, messages: [{ role: 'user', content: 'x' }] });
    expect(r.status).toBe(500);
    expect(server.requests[0]!.error).toMatch(/working directory/);
  });

  it('reads the working directory a CLI announces in its system text', async () => {
    server = await startScriptedModel({
      script: [{ match: 'x', actions: [{ kind: 'write', path: 'a', content: '' }] }],
    });
    const r = await messages(server.url, {
      stream: true,
      system: [{ type: 'text', text: 'env\n - Primary working directory: /work/p\n' }],
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(toolUseOf(events(await r.text())).input).toEqual({ file_path: '/work/p/a' });
  });
});

describe('faults', () => {
  const call = (fault: ScriptedCall['fault']): ScriptedCall[] => [
    { match: 'go', finalText: 'x', ...(fault ? { fault } : {}) },
  ];

  it('429 carries retry-after; 401 and 500 carry the API error shapes; a CLI retry meets the same fault', async () => {
    const s = await start(call({ kind: 'rate_limit', retryAfterSeconds: 9 }));
    for (let i = 0; i < 2; i += 1) {
      const r = await messages(s.url, { stream: true, messages: [{ role: 'user', content: 'go' }] });
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('9');
      expect(((await r.json()) as Record<string, Record<string, string>>)['error']!['type']).toBe(
        'rate_limit_error',
      );
    }
    s.setScript(call({ kind: 'unauthorized' }));
    expect((await messages(s.url, { messages: [{ role: 'user', content: 'go' }] })).status).toBe(401);
    s.setScript(call({ kind: 'server_error' }));
    expect((await messages(s.url, { messages: [{ role: 'user', content: 'go' }] })).status).toBe(500);
    expect(s.requests.map((r) => r.fault)).toEqual([
      'rate_limit',
      'rate_limit',
      'unauthorized',
      'server_error',
    ]);
  });

  it('a fault with times is played that often, then the call goes on as scripted', async () => {
    const s = await start([
      { match: 'go', finalText: 'after', fault: { kind: 'rate_limit', retryAfterSeconds: 1, times: 2 } },
    ]);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const r = await messages(s.url, { messages: [{ role: 'user', content: 'go' }] });
      statuses.push(r.status);
      await r.text();
    }
    expect(statuses).toEqual([429, 429, 200]);
    expect(s.requests.map((r) => r.fault ?? r.reply)).toEqual(['rate_limit', 'rate_limit', 'text']);
  });

  it('a fault can start at a later turn', async () => {
    const s = await start([
      {
        match: 'go',
        actions: [{ kind: 'shell', command: 'true' }],
        fault: { kind: 'server_error', atTurn: 1 },
      },
    ]);
    const first = await messages(s.url, { stream: true, messages: [{ role: 'user', content: 'go' }] });
    const tool = toolUseOf(events(await first.text()));
    const second = await messages(s.url, {
      stream: true,
      messages: [
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: tool.id, name: tool.name, input: tool.input }],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: tool.id, content: '' }] },
      ],
    });
    expect(second.status).toBe(500);
  });

  it('malformed SSE: a 200 stream whose data is not JSON', async () => {
    const s = await start(call({ kind: 'malformed_sse' }));
    const r = await messages(s.url, { stream: true, messages: [{ role: 'user', content: 'go' }] });
    expect(r.status).toBe(200);
    const text = await r.text();
    expect(() => events(text)).toThrow();
  });

  it('a stall sends the first event and then nothing until the client gives up', async () => {
    const s = await start(call({ kind: 'stall' }));
    const r = await messages(s.url, { stream: true, messages: [{ role: 'user', content: 'go' }] });
    const reader = r.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain('message_start');
    const next = reader.read();
    const raced = await Promise.race([
      next.then(() => 'more'),
      s.waitForRequest((q) => q.fault === 'stall').then(() => 'stalled'),
    ]);
    expect(raced).toBe('stalled');
    await reader.cancel();
  });

  it('a long stream sends a final text of the asked size in many deltas', async () => {
    const s = await start(call({ kind: 'long_stream', bytes: 200_000 }));
    const r = await messages(s.url, { stream: true, messages: [{ role: 'user', content: 'go' }] });
    const deltas = events(await r.text()).filter((e) => e['type'] === 'content_block_delta');
    expect(deltas.length).toBeGreaterThan(100);
    expect(deltas.map((e) => (e['delta'] as Record<string, string>)['text']).join('')).toHaveLength(200_000);
  });
});

describe('the OpenAI Responses API (as Codex uses it)', () => {
  async function responses(url: string, body: Record<string, unknown>): Promise<Record<string, unknown>[]> {
    const r = await fetch(`${url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: 'Bearer k' },
      body: JSON.stringify({ model: 'gpt-test', stream: true, ...body }),
    });
    expect(r.status).toBe(200);
    return events(await r.text());
  }
  const codexTools = [
    { type: 'function', name: 'exec_command' },
    { type: 'custom', name: 'apply_patch' },
  ];
  const input = (text: string) => [
    {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: `<environment_context><cwd>${WORKDIR}</cwd></environment_context>` },
      ],
    },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text }] },
  ];

  it('adds files and edits them with apply_patch, runs commands with exec_command, reports usage with cached tokens', async () => {
    const s = await start([
      {
        match: 'PHASE',
        actions: [
          { kind: 'write', path: 'new.txt', content: 'a\nb\n' },
          { kind: 'edit', path: 'new.txt', oldText: 'b\n', newText: 'c\n' },
          { kind: 'shell', command: 'ls' },
        ],
        usage: { input: 50, output: 5, cacheRead: 20 },
        finalText: 'bye',
      },
    ]);
    const items: Record<string, unknown>[] = [...input('PHASE go')];
    const calls: unknown[] = [];
    for (let turn = 0; turn < 10; turn += 1) {
      const evs = await responses(s.url, { input: items, tools: codexTools });
      expect(evs[0]!['type']).toBe('response.created');
      const completed = evs.at(-1)!;
      expect(completed['type']).toBe('response.completed');
      expect((completed['response'] as Record<string, unknown>)['usage']).toMatchObject({
        input_tokens: 70,
        input_tokens_details: { cached_tokens: 20 },
        output_tokens: 5,
      });
      const item = evs.find((e) => e['type'] === 'response.output_item.done')!['item'] as Record<
        string,
        string
      >;
      if (item['type'] === 'message') {
        const added = evs.findIndex((e) => e['type'] === 'response.output_item.added');
        const delta = evs.findIndex((e) => e['type'] === 'response.output_text.delta');
        expect(added).toBeLessThan(delta);
        break;
      }
      calls.push(
        item['type'] === 'custom_tool_call'
          ? [item['name'], item['input']]
          : [item['name'], JSON.parse(item['arguments']!)],
      );
      items.push(item, {
        type: item['type'] === 'custom_tool_call' ? 'custom_tool_call_output' : 'function_call_output',
        call_id: item['call_id'],
        output: 'ok',
      });
    }
    expect(calls).toEqual([
      ['apply_patch', '*** Begin Patch\n*** Add File: new.txt\n+a\n+b\n*** End Patch\n'],
      ['apply_patch', '*** Begin Patch\n*** Update File: new.txt\n@@\n-b\n+c\n*** End Patch\n'],
      ['exec_command', { cmd: 'ls' }],
    ]);
    expect(s.usageOfCall(0)).toEqual({ input: 200, output: 20, cacheRead: 80, cacheWrite: 0 });
    expect(s.requests[0]!.auth).toBe('bearer');
  });

  it('without apply_patch, writes the exact bytes through the shell', async () => {
    const s = await start([
      { match: 'PHASE', actions: [{ kind: 'write', path: 'd/x.txt', content: "it's\nno newline" }] },
    ]);
    const evs = await responses(s.url, {
      input: input('PHASE'),
      tools: [{ type: 'function', name: 'exec_command' }],
    });
    const item = evs.find((e) => e['type'] === 'response.output_item.done')!['item'] as Record<
      string,
      string
    >;
    expect(JSON.parse(item['arguments']!)).toEqual({
      cmd: `mkdir -p 'd' && printf '%s' 'it'\\''s\nno newline' > 'd/x.txt'`,
    });
  });
});

describe('the Gemini API', () => {
  const GEMINI_TOOLS = [
    {
      functionDeclarations: ['read_file', 'write_file', 'replace', 'run_shell_command'].map((name) => ({
        name,
      })),
    },
  ];
  const gemini = (url: string, model: string, method: string, body: Record<string, unknown>) =>
    fetch(`${url}/v1beta/models/${model}:${method}${method.startsWith('stream') ? '?alt=sse' : ''}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'secret-key-value' },
      body: JSON.stringify({ tools: GEMINI_TOOLS, ...body }),
    });
  const chunks = (text: string): Record<string, unknown>[] =>
    text
      .split('\r\n\r\n')
      .filter((block) => block.trim() !== '')
      .map((block) => JSON.parse(block.replace(/^data: /, '')) as Record<string, unknown>);
  const partsOf = (chunk: Record<string, unknown>): Record<string, unknown>[] =>
    (chunk['candidates'] as { content: { parts: Record<string, unknown>[] } }[])[0]!.content.parts;

  it('plays write_file, replace and run_shell_command turn by turn, with ids the history brings back', async () => {
    // No workdir option: the paths come from the workspace directory the request announces.
    server = await startScriptedModel({
      script: [
        {
          match: 'GEM',
          actions: [
            { kind: 'write', path: 'a.txt', content: 'one\n' },
            { kind: 'edit', path: 'a.txt', oldText: 'one\n', newText: 'two\n' },
            { kind: 'shell', command: 'ls' },
          ],
          usage: { input: 100, output: 10, cacheRead: 40 },
          finalText: 'all done',
        },
      ],
    });
    const s = server;
    const contents: Record<string, unknown>[] = [
      { role: 'user', parts: [{ text: '- **Workspace Directories:**\n  - /work/g\n' }, { text: 'GEM' }] },
    ];
    const calls: unknown[] = [];
    for (;;) {
      const r = await gemini(s.url, 'gemini-test', 'streamGenerateContent', { contents });
      expect(r.status).toBe(200);
      const all = chunks(await r.text());
      const parts = all.flatMap(partsOf);
      const call = parts.find((p) => p['functionCall'] !== undefined)?.['functionCall'] as
        Record<string, unknown> | undefined;
      if (call === undefined) {
        expect(parts.map((p) => p['text']).join('')).toBe('all done');
        expect(all.at(-1)!['usageMetadata']).toEqual({
          promptTokenCount: 140,
          candidatesTokenCount: 10,
          totalTokenCount: 150,
          cachedContentTokenCount: 40,
        });
        break;
      }
      calls.push([call['name'], call['args']]);
      contents.push(
        { role: 'model', parts: [{ functionCall: call }] },
        { role: 'user', parts: [{ functionResponse: { id: call['id'], name: call['name'], response: {} } }] },
      );
    }
    expect(calls).toEqual([
      ['write_file', { file_path: '/work/g/a.txt', content: 'one\n' }],
      [
        'replace',
        {
          file_path: '/work/g/a.txt',
          instruction: 'Apply the scripted edit.',
          old_string: 'one\n',
          new_string: 'two\n',
        },
      ],
      ['run_shell_command', { command: 'ls', description: 'Run a command' }],
    ]);
    expect(s.requests.map((r) => r.api)).toEqual(['gemini', 'gemini', 'gemini', 'gemini']);
    expect(s.usageOfCall(0)).toEqual({ input: 400, output: 40, cacheRead: 160, cacheWrite: 0 });
  });

  it('answers generateContent in one body, countTokens, and a 429 in Google’s shape with RetryInfo', async () => {
    const s = await start([
      { match: 'LIMITED', fault: { kind: 'rate_limit', retryAfterSeconds: 3 } },
      { match: 'PLAIN', finalText: 'hello' },
    ]);
    const plain = await gemini(s.url, 'g', 'generateContent', {
      contents: [{ role: 'user', parts: [{ text: 'PLAIN' }] }],
    });
    expect(partsOf((await plain.json()) as Record<string, unknown>)).toEqual([{ text: 'hello' }]);
    const limited = await gemini(s.url, 'g', 'streamGenerateContent', {
      contents: [{ role: 'user', parts: [{ text: 'LIMITED' }] }],
    });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('3');
    const error = ((await limited.json()) as { error: Record<string, unknown> }).error;
    expect(error['status']).toBe('RESOURCE_EXHAUSTED');
    expect(error['details']).toEqual([
      { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '3s' },
    ]);
    const count = await gemini(s.url, 'g', 'countTokens', { contents: [] });
    expect(((await count.json()) as Record<string, number>)['totalTokens']).toBeGreaterThan(0);
  });
});

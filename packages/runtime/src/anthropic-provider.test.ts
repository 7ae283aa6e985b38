import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicProvider, type AnthropicProviderOptions } from './anthropic-provider.js';
import { ModelError } from './errors.js';
import { text, type ContentBlock } from './messages.js';
import type { CompletionRequest, StreamEvent } from './provider.js';
import { closedLoopbackUrl } from './test-support/closed-port.js';
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi, type FakeScript } from './testing/index.js';

const READ_FILE = {
  name: 'read_file',
  description: 'Read a file',
  input_schema: { type: 'object' as const, properties: { path: { type: 'string' } }, required: ['path'] },
};

const REQUEST: CompletionRequest = {
  model: 'claude-test',
  system: 'You are a test double.',
  maxTokens: 256,
  messages: [{ role: 'user', content: [text('read package.json')] }],
  tools: [READ_FILE],
};

const servers: FakeMessagesApi[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fake(brain: FakeBrain): Promise<FakeMessagesApi> {
  const server = await startFakeMessagesApi({ brain });
  servers.push(server);
  return server;
}

/** An explicit apiKey always: a real key in the environment must never be used. */
function provider(url: string, extra: AnthropicProviderOptions = {}): AnthropicProvider {
  return new AnthropicProvider({ apiKey: 'test-key', baseURL: url, ...extra });
}

/** Runs one completion against a fake answering every request with `script`. */
async function run(script: FakeScript, extra: AnthropicProviderOptions = {}) {
  const server = await fake(() => script);
  const events: StreamEvent[] = [];
  let error: unknown;
  try {
    for await (const ev of provider(server.url, extra).stream(REQUEST, new AbortController().signal)) events.push(ev);
  } catch (err) {
    error = err;
  }
  return { server, events, error };
}

async function modelError(script: FakeScript, extra: AnthropicProviderOptions = {}): Promise<ModelError> {
  const { error } = await run(script, extra);
  expect(error).toBeInstanceOf(ModelError);
  return error as ModelError;
}

async function firstError(p: AnthropicProvider): Promise<ModelError> {
  const err = await p.stream(REQUEST, new AbortController().signal).next().then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(ModelError);
  return err as ModelError;
}

const textOf = (events: StreamEvent[]): string =>
  events.map((e) => (e.type === 'text' ? e.text : '')).join('');

describe('AnthropicProvider streaming through the real SDK', () => {
  it('streams a text turn and reports all four usage fields', async () => {
    const usage = { input_tokens: 12, output_tokens: 7, cache_creation_input_tokens: 3, cache_read_input_tokens: 4 };
    const { server, events, error } = await run({ text: 'Hello there, wide world!', chunks: 4, usage });
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type === 'text')).toHaveLength(4);
    expect(textOf(events)).toBe('Hello there, wide world!');
    expect(events.at(-1)).toEqual({ type: 'done', stopReason: 'end_turn', usage });

    expect(server.requests).toHaveLength(1);
    const req = server.requests[0];
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/v1/messages');
    expect(req.headers.authorization).toBe('Bearer test-key');
    const cached = { cache_control: { type: 'ephemeral' } };
    expect(req.body).toEqual({
      stream: true,
      model: 'claude-test',
      max_tokens: 256,
      system: [{ type: 'text', text: 'You are a test double.', ...cached }],
      tools: [READ_FILE],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'read package.json', ...cached }] }],
    });
  });

  it('sends the plain request when prompt caching is off', async () => {
    const { server } = await run({ text: 'ok' }, { promptCaching: false });
    expect(server.requests[0].body).toMatchObject({
      system: 'You are a test double.',
      tools: [READ_FILE],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'read package.json' }] }],
    });
    expect(JSON.stringify(server.requests[0].body)).not.toContain('cache_control');
  });

  it('tells onRequest of each request as it goes to the HTTP client, before its reply is read', async () => {
    const server = await fake(() => ({ text: 'hi' }));
    const seen: number[] = [];
    const p = provider(server.url, { onRequest: () => seen.push(server.requests.length) });
    for (let i = 0; i < 2; i++) {
      const stream = p.stream(REQUEST, new AbortController().signal);
      // The first event needs the reply: by then the request was announced, once.
      await stream.next();
      expect(seen).toHaveLength(i + 1);
      for await (const _ of stream);
    }
    // Announced before the server had it: each time, the server had seen only the earlier ones.
    expect(seen).toEqual([0, 1]);
  });

  it('assembles a tool call whose input JSON arrives in pieces', async () => {
    const input = { path: 'package.json', options: { lines: [1, 20], note: 'ünïcode ✓' } };
    const { events, error } = await run({ text: 'Let me read that.', toolUse: { id: 'toolu_1', name: 'read_file', input } });
    expect(error).toBeUndefined();
    expect(events.filter((e) => e.type !== 'text')).toEqual([
      { type: 'block', block: { type: 'text', text: 'Let me read that.' } },
      { type: 'tool_use_start', id: 'toolu_1', name: 'read_file' },
      { type: 'tool_use', id: 'toolu_1', name: 'read_file', input },
      { type: 'done', stopReason: 'tool_use', usage: expect.objectContaining({ output_tokens: expect.any(Number) }) },
    ]);
  });

  it('turns invalid or non-object tool JSON into inputError without throwing', async () => {
    for (const [raw, problem] of [
      ['{"path": "pack', /not valid JSON/],
      ['[1, 2]', /must be a JSON object, got an array/],
      ['"just a string"', /must be a JSON object, got a string/],
    ] as const) {
      const { events, error } = await run({ rawInputJson: raw, toolUse: { name: 'read_file', input: {} } });
      expect(error).toBeUndefined();
      const call = events.find((e) => e.type === 'tool_use');
      expect(call).toMatchObject({ type: 'tool_use', name: 'read_file', input: {} });
      expect(call?.type === 'tool_use' && call.inputError).toMatch(problem);
      expect(events.at(-1)?.type).toBe('done');
    }
  });

  it('treats an empty tool input as {}', async () => {
    const { events } = await run({ rawInputJson: '', toolUse: { name: 'sleep_until_event_or_input', input: {} } });
    const call = events.find((e) => e.type === 'tool_use');
    expect(call).toEqual({ type: 'tool_use', id: expect.any(String), name: 'sleep_until_event_or_input', input: {} });
  });
});

describe('AnthropicProvider error mapping', () => {
  it('maps 429 to rate_limit with retry-after in milliseconds, without SDK retries', async () => {
    const { server, error } = await run({ status: 429, retryAfterSeconds: 7 });
    expect(error).toMatchObject({ kind: 'rate_limit', retryable: true, status: 429, retryAfterMs: 7000 });
    expect(server.requests).toHaveLength(1);
  });

  it('reads retry-after-ms and HTTP-date retry-after too', async () => {
    const ms = await modelError({ status: 429, headers: { 'retry-after-ms': '1500', 'retry-after': '9' } });
    expect(ms.retryAfterMs).toBe(1500);
    const date = new Date(Date.now() + 60_000).toUTCString();
    const dated = await modelError({ status: 429, headers: { 'retry-after': date } });
    expect(dated.retryAfterMs).toBeGreaterThan(50_000);
    expect(dated.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  it('maps 529 to overloaded and 500/503 to server', async () => {
    expect(await modelError({ status: 529 })).toMatchObject({ kind: 'overloaded', retryable: true, status: 529 });
    expect(await modelError({ status: 500 })).toMatchObject({ kind: 'server', retryable: true, status: 500 });
    expect(await modelError({ status: 503 })).toMatchObject({ kind: 'server', retryable: true });
  });

  it('maps a mid-stream SSE overloaded_error to overloaded, after the text so far', async () => {
    const { events, error } = await run({ text: 'abcdef', chunks: 3, errorEvent: { type: 'overloaded_error', afterChunks: 4 } });
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ kind: 'overloaded', retryable: true });
    expect(textOf(events)).toBe('ab');
  });

  it('reports a stream cut mid-way as stream_cut', async () => {
    const { events, error } = await run({ text: 'abcdef', chunks: 3, cutAfterChunks: 5 });
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ kind: 'stream_cut', retryable: true });
    expect(textOf(events)).toBe('abcd');
    expect(events.some((e) => e.type === 'done')).toBe(false);
  });

  it('maps 401 to auth, not retryable, pointing at ANTHROPIC_API_KEY', async () => {
    const err = await modelError({ status: 401 });
    expect(err).toMatchObject({ kind: 'auth', retryable: false, status: 401 });
    expect(err.message).toContain('ANTHROPIC_API_KEY');
    expect(err.message).not.toContain('\n');
  });

  it('names ANTHROPIC_AUTH_TOKEN when a bearer token was rejected, and sends it as one', async () => {
    const server = await fake(() => ({ status: 401 }));
    const p = new AnthropicProvider({ authToken: 'tok-123', baseURL: server.url });
    const err = await firstError(p);
    expect(err.message).toMatch(/check ANTHROPIC_AUTH_TOKEN\.$/);
    expect(server.requests[0].headers.authorization).toBe('Bearer tok-123');
  });

  it('maps 403 to auth and 400/404/413/422 to invalid_request', async () => {
    expect((await modelError({ status: 403 })).kind).toBe('auth');
    for (const status of [400, 404, 413, 422]) {
      expect(await modelError({ status })).toMatchObject({ kind: 'invalid_request', retryable: false, status });
    }
  });

  it('maps a refused connection before the API ever answered to unreachable, naming ANTHROPIC_BASE_URL and its value', async () => {
    const url = await closedLoopbackUrl();
    const err = await firstError(provider(url));
    expect(err).toMatchObject({ kind: 'unreachable', retryable: false });
    expect(err.message).toBe(
      `Could not connect to the model API at ${url}: the connection was refused: nothing is listening at that address ` +
        `(ECONNREFUSED). ANTHROPIC_BASE_URL is set to ${url}: check the address and that the server is running there, ` +
        'or unset ANTHROPIC_BASE_URL to use the Anthropic API.',
    );
  });

  it('maps a host name that does not resolve to unreachable (ENOTFOUND)', async () => {
    // .invalid never resolves (RFC 6761): no lookup leaves this machine with an answer.
    const err = await firstError(provider('http://model-api.invalid'));
    expect(err).toMatchObject({ kind: 'unreachable', retryable: false });
    expect(err.message).toMatch(/^Could not connect to the model API at http:\/\/model-api\.invalid: the host name model-api\.invalid (does not resolve \(ENOTFOUND\)|could not be looked up: DNS did not answer \(EAI_AGAIN\))\. ANTHROPIC_BASE_URL is set to http:\/\/model-api\.invalid/);
  });

  it('maps a failed TLS handshake (https:// to a plain HTTP server) to unreachable, saying so', async () => {
    const server = await fake(() => ({ text: 'unused' }));
    const url = server.url.replace(/^http:/, 'https:');
    const err = await firstError(provider(url));
    expect(err).toMatchObject({ kind: 'unreachable', retryable: false });
    expect(err.message).toContain(`Could not connect to the model API at ${url}: the TLS handshake failed: the server there does not speak TLS (`);
    expect(err.message).toContain('so the address may be an http:// one.');
    expect(server.requests).toHaveLength(0);
  });

  it('maps a refused connection after the API answered once to network (transient, retried at length)', async () => {
    const server = await startFakeMessagesApi({ brain: () => ({ text: 'hello' }) });
    const p = provider(server.url);
    for await (const _ of p.stream(REQUEST, new AbortController().signal));
    await server.close();
    const err = await firstError(p);
    expect(err).toMatchObject({ kind: 'network', retryable: true });
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('maps a server that never answers to timeout', async () => {
    const server = await fake(() => new Promise<FakeScript>(() => {}));
    const stream = provider(server.url, { timeoutMs: 200 }).stream(REQUEST, new AbortController().signal);
    const err = await stream.next().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect(err).toMatchObject({ kind: 'timeout', retryable: true });
  });

  it('maps a server gone silent mid-reply to timeout', async () => {
    const err = await modelError({ text: 'abcdef', stallAfterChunks: 4, stallMs: 60_000 }, { timeoutMs: 200 });
    expect(err).toMatchObject({ kind: 'timeout', retryable: true });
  });
});

describe('AnthropicProvider cancellation', () => {
  it('rejects promptly with an abort error when aborted while the server stalls', async () => {
    let seen!: () => void;
    const requestSeen = new Promise<void>((resolve) => (seen = resolve));
    const server = await fake(() => {
      seen();
      return { text: 'never sent', stallMs: 60_000 };
    });
    const ctrl = new AbortController();
    const pending = provider(server.url).stream(REQUEST, ctrl.signal).next();
    await requestSeen;
    const started = Date.now();
    ctrl.abort();
    const err = await pending.then(() => undefined, (e: unknown) => e);
    expect(err).not.toBeInstanceOf(ModelError);
    expect((err as Error).name).toBe('AbortError');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('rejects with an abort error when aborted mid-reply, yielding nothing more', async () => {
    const server = await fake(() => ({ text: 'abcdef', chunks: 3, stallAfterChunks: 4, stallMs: 60_000 }));
    const ctrl = new AbortController();
    const stream = provider(server.url).stream(REQUEST, ctrl.signal);
    expect((await stream.next()).value).toEqual({ type: 'text', text: 'ab' });
    ctrl.abort();
    const err = await stream.next().then(() => undefined, (e: unknown) => e);
    expect(err).not.toBeInstanceOf(ModelError);
    expect((err as Error).name).toBe('AbortError');
  });

  it('throws at once for an already aborted signal, without a request', async () => {
    const server = await fake(() => ({ text: 'unused' }));
    const err = await provider(server.url)
      .stream(REQUEST, AbortSignal.abort())
      .next()
      .then(() => undefined, (e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(server.requests).toHaveLength(0);
  });
});

describe('fake Messages API', () => {
  it('answers a non-streaming request with a whole message', async () => {
    const server = await fake(() => ({ text: 'hi', toolUse: { id: 'toolu_9', name: 'read_file', input: { path: 'a' } } }));
    const client = new Anthropic({ apiKey: 'test-key', baseURL: server.url, maxRetries: 0 });
    const msg = await client.messages.create({ model: 'claude-test', max_tokens: 16, messages: [{ role: 'user', content: 'x' }] });
    expect(msg.stop_reason).toBe('tool_use');
    expect(msg.content).toEqual([
      { type: 'text', text: 'hi' },
      { type: 'tool_use', id: 'toolu_9', name: 'read_file', input: { path: 'a' } },
    ]);
    expect(server.requests[0]?.body.stream).toBeUndefined();
  });

  describe('on a current model', () => {
    const CURRENT: CompletionRequest = { ...REQUEST, model: 'claude-sonnet-5-5' };

    async function stream(script: FakeScript, request: CompletionRequest = CURRENT) {
      const server = await fake(() => script);
      const events: StreamEvent[] = [];
      for await (const ev of provider(server.url).stream(request, new AbortController().signal)) events.push(ev);
      return { server, events };
    }

    it('asks for adaptive thinking with a display that returns the notes, and the effort; never a setting a current model refuses', async () => {
      const { server } = await stream({ text: 'ok' }, { ...CURRENT, effort: 'low' });
      const body = server.requests[0].body;
      expect(body.thinking).toEqual({ type: 'adaptive', display: 'summarized' });
      expect(body.output_config).toEqual({ effort: 'low' });
      for (const refused of ['temperature', 'top_p', 'top_k', 'tool_choice']) expect(body).not.toHaveProperty(refused);
      expect(JSON.stringify(body)).not.toContain('budget_tokens');
      expect(server.requests[0].status).toBe(200);
      // omitted asked for: the notes stay empty.
      const quiet = await stream({ text: 'Reading.', toolUse: { name: 'read_file', input: { path: 'a' } } }, { ...CURRENT, thinkingDisplay: 'omitted' });
      expect(quiet.server.requests[0].body.thinking).toEqual({ type: 'adaptive', display: 'omitted' });
      const block = quiet.events.find((e) => e.type === 'block');
      expect(block).toMatchObject({ block: { type: 'thinking', thinking: '' } });
    });

    it('hands over each thinking block whole, signature included, in reply order; the notes stream as they come', async () => {
      const { events } = await stream({ text: 'Reading the manifest first.', toolUse: { id: 'toolu_9', name: 'read_file', input: { path: 'package.json' } } });
      const blocks = events.filter((e) => e.type === 'block' || e.type === 'tool_use');
      expect(blocks).toHaveLength(2);
      const [thinking, call] = blocks;
      expect(thinking).toMatchObject({ type: 'block', block: { type: 'thinking', thinking: 'Reading the manifest first.' } });
      expect(thinking.type === 'block' && thinking.block.type === 'thinking' && thinking.block.signature.length).toBeGreaterThan(20);
      expect(call).toMatchObject({ type: 'tool_use', id: 'toolu_9' });
      const notes = events.filter((e) => e.type === 'thinking').map((e) => (e.type === 'thinking' ? e.text : ''));
      expect(notes[0]).toBe('');
      expect(notes.join('')).toBe('Reading the manifest first.');
      // No text block: on current models the words between calls are thinking.
      expect(events.some((e) => e.type === 'text')).toBe(false);
    });

    it('reports stop reasons and a refusal\'s details', async () => {
      const cut = await stream({ text: 'a long answer that goes on and on', cutAtOutputTokens: 3 });
      expect(cut.events.at(-1)).toMatchObject({ type: 'done', stopReason: 'max_tokens' });
      const refused = await stream({ text: 'No.', stopReason: 'refusal', stopDetails: { category: 'cyber', explanation: 'malware' } });
      expect(refused.events.at(-1)).toMatchObject({ type: 'done', stopReason: 'refusal', stopDetails: { category: 'cyber', explanation: 'malware' } });
    });

    it('sends no thinking setting to a model that takes none, and effort only where the table lists it', async () => {
      const { server } = await stream({ text: 'ok' }, { ...REQUEST, model: 'claude-haiku-4-5', effort: 'high' });
      const body = server.requests[0].body;
      expect(body).not.toHaveProperty('thinking');
      expect(body).not.toHaveProperty('output_config');
      // A model the table doesn't know gets what the user set (new models take it).
      const unknown = await stream({ text: 'ok' }, { ...REQUEST, model: 'claude-next-9', effort: 'high' });
      expect(unknown.server.requests[0].body.output_config).toEqual({ effort: 'high' });
      expect(unknown.server.requests[0].body).not.toHaveProperty('thinking');
    });

    it('goes on without the thinking blocks whose conversation changed under them, instead of failing every request', async () => {
      const server = await fake((body) =>
        (body.messages ?? []).length === 1 ? { text: 'Reading.', toolUse: { id: 'toolu_a', name: 'read_file', input: { path: 'a' } } } : { text: 'Done.' },
      );
      const p = provider(server.url);
      const first: StreamEvent[] = [];
      for await (const ev of p.stream(CURRENT, new AbortController().signal)) first.push(ev);
      const reply = first.flatMap((e): ContentBlock[] =>
        e.type === 'block' ? [e.block] : e.type === 'tool_use' ? [{ type: 'tool_use', id: e.id, name: e.name, input: e.input }] : [],
      );
      const next: CompletionRequest = {
        ...CURRENT,
        // The instructions changed since the block was made: it is bound to the old ones.
        system: 'You are a test double, edited.',
        messages: [
          ...CURRENT.messages,
          { role: 'assistant', content: reply },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_a', content: [text('a')] }] },
        ],
      };
      const events: StreamEvent[] = [];
      for await (const ev of p.stream(next, new AbortController().signal)) events.push(ev);
      expect(events.at(-1)).toMatchObject({ type: 'done', stopReason: 'end_turn' });
      const [, refused, retried] = server.requests;
      expect(refused.status).toBe(400);
      expect(refused.error).toContain('bound to a different conversation');
      expect(retried.status).toBe(200);
      expect(retried.body.thinking).toMatchObject({ block_binding: { prefix_mismatch_behavior: 'drop_block' } });
      expect(retried.headers['anthropic-beta']).toContain('thinking-binding-controls-2026-08-01');
      expect(retried.dropped).toEqual([{ path: 'messages.1.content.0', reason: 'prefix_binding_mismatch' }]);
      // The conversation asks for it from now on, without being refused first.
      for await (const ev of p.stream(next, new AbortController().signal)) void ev;
      expect(server.requests).toHaveLength(4);
      expect(server.requests[3]).toMatchObject({ status: 200, body: { thinking: { block_binding: { prefix_mismatch_behavior: 'drop_block' } } } });
    });
  });
});

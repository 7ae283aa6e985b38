// The fake driven through the real SDK: what a client sees must be what the real service sends.
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeMessagesApi, type FakeMessagesApi, type FakeMessagesApiOptions, type FakeScript } from './index.js';
import { frameSchedule } from './pacing.js';
import { sumUsage } from './usage-total.js';

const servers: FakeMessagesApi[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fake(script: FakeScript | ((i: number) => FakeScript), opts: Omit<FakeMessagesApiOptions, 'brain'> = {}) {
  const api = await startFakeMessagesApi({ ...opts, brain: (_b, i) => (typeof script === 'function' ? script(i) : script) });
  servers.push(api);
  return { api, client: new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0 }) };
}

/** The default current model: thinking on, every rule of the December 2026 API applies. */
const MODEL = 'claude-sonnet-5-5';
/** An id outside the model table: served as in 2025 (blocks as scripted, no thinking). */
const UNKNOWN = 'claude-test';
const MARK = { cache_control: { type: 'ephemeral' as const } };
/** The opening thinking block of a reply under the default display (omitted): no text, a signature. */
const EMPTY_THINKING = { type: 'thinking', thinking: '', signature: expect.any(String) };
/** Text of exactly `tokens` estimated tokens. */
const filler = (tokens: number, ch = 'a') => ch.repeat(tokens * 4);
const ask = (q: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text: q }] });

const TWO_READS: FakeScript = {
  content: [
    { type: 'text', text: 'Reading both files.' },
    { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
    { type: 'text', text: 'And the other:' },
    { type: 'tool_use', id: 'toolu_b', name: 'read_file', input: { path: 'b.ts' }, rawInputJson: '{ "path" : "b.ts" }' },
  ],
};

describe('fake Messages API: replies with several blocks (an id outside the table, 2025 shape)', () => {
  it('streams each block with its own index, in order, and the SDK assembles them', async () => {
    const { client } = await fake(TWO_READS);
    const stream = await client.messages.create({ model: UNKNOWN, max_tokens: 64, messages: [ask('read a and b')], stream: true });
    const starts: [number, string][] = [];
    const json = new Map<number, string[]>();
    let stop: string | null = null;
    for await (const ev of stream) {
      if (ev.type === 'content_block_start') starts.push([ev.index, ev.content_block.type]);
      if (ev.type === 'content_block_delta' && ev.delta.type === 'input_json_delta') {
        json.set(ev.index, [...(json.get(ev.index) ?? []), ev.delta.partial_json]);
      }
      if (ev.type === 'message_delta') stop = ev.delta.stop_reason;
    }
    expect(starts).toEqual([[0, 'text'], [1, 'tool_use'], [2, 'text'], [3, 'tool_use']]);
    // An empty partial_json first, then slices of exactly the scripted JSON.
    expect(json.get(1)?.[0]).toBe('');
    expect(json.get(1)?.join('')).toBe('{"path":"a.ts"}');
    expect(json.get(3)?.join('')).toBe('{ "path" : "b.ts" }');
    expect(stop).toBe('tool_use');
  });

  it('gives the same blocks to the SDK message stream and to a non-streaming request', async () => {
    const { client } = await fake(TWO_READS);
    const expected = [
      { type: 'text', text: 'Reading both files.' },
      { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
      { type: 'text', text: 'And the other:' },
      { type: 'tool_use', id: 'toolu_b', name: 'read_file', input: { path: 'b.ts' } },
    ];
    const params = { model: UNKNOWN, max_tokens: 64, messages: [ask('read a and b')] };
    const streamed = await client.messages.stream(params).finalMessage();
    expect(streamed.content).toMatchObject(expected);
    expect(streamed.stop_reason).toBe('tool_use');
    const whole = await client.messages.create(params);
    expect(whole.content).toEqual(expected);
    expect(whole.stop_reason).toBe('tool_use');
  });

  it('ends a text-only reply with end_turn and names unnamed tool calls apart', async () => {
    const { client } = await fake((i) =>
      i === 0
        ? { content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] }
        : { content: [{ type: 'tool_use', name: 'x', input: {} }, { type: 'tool_use', name: 'y', input: {} }] },
    );
    const params = { model: UNKNOWN, max_tokens: 64, messages: [ask('go')] };
    const first = await client.messages.create(params);
    expect(first.content).toEqual([{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }]);
    expect(first.stop_reason).toBe('end_turn');
    const second = await client.messages.create(params);
    const ids = second.content.map((b) => (b.type === 'tool_use' ? b.id : ''));
    expect(new Set(ids).size).toBe(2);
  });

  it('refuses a script that mixes content with the text/toolUse shorthand', async () => {
    const { client } = await fake({ content: [{ type: 'text', text: 'a' }], text: 'b' });
    const err = await client.messages.create({ model: UNKNOWN, max_tokens: 8, messages: [ask('go')] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 500, message: expect.stringContaining('either content or text') });
  });
});

describe('fake Messages API: history validation', () => {
  const calls = {
    role: 'assistant' as const,
    content: [
      { type: 'tool_use' as const, id: 'toolu_a', name: 'read_file', input: {} },
      { type: 'tool_use' as const, id: 'toolu_b', name: 'read_file', input: {} },
    ],
  };
  const result = (id: string) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'ok' });

  it('answers a bad history with 400 invalid_request_error, records why, and never asks the brain', async () => {
    const { api, client } = await fake({ text: 'unused' });
    const messages = [ask('go'), calls, { role: 'user' as const, content: [result('toolu_a'), { type: 'text' as const, text: 'hm' }] }];
    const err = await client.messages.create({ model: MODEL, max_tokens: 8, messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const bad = err as InstanceType<typeof Anthropic.BadRequestError>;
    expect(bad.type).toBe('invalid_request_error');
    expect(bad.apiMessage).toMatch(/^messages\.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_b\./);
    expect(api.requests[0]).toMatchObject({ status: 400, error: bad.apiMessage });
    expect(api.requests[0]?.usage).toBeUndefined();

    const streamed = await client.messages
      .create({ model: MODEL, max_tokens: 8, messages: [ask('a'), ask('b')], stream: true })
      .catch((e: unknown) => e);
    expect(streamed).toMatchObject({ status: 400, apiMessage: expect.stringMatching(/^messages\.1: roles must alternate/) });
    expect(sumUsage(api.requests).requests).toBe(0);
  });

  it('passes a history with parallel calls answered in order', async () => {
    const { api, client } = await fake({ text: 'Both read.' });
    const messages = [ask('go'), calls, { role: 'user' as const, content: [result('toolu_a'), result('toolu_b')] }];
    const msg = await client.messages.create({ model: MODEL, max_tokens: 8, messages });
    expect(msg.content).toEqual([EMPTY_THINKING, { type: 'text', text: 'Both read.' }]);
    expect(api.requests[0]).toMatchObject({ status: 200, usage: expect.any(Object), dropped: [] });
  });

  it('counts every cache_control marker in the request, tools and system included', async () => {
    const { client } = await fake({ text: 'unused' });
    const tools = [{ name: 'read_file', input_schema: { type: 'object' as const }, ...MARK }];
    const system = [{ type: 'text' as const, text: 'a', ...MARK }, { type: 'text' as const, text: 'b', ...MARK }];
    const marked = (t: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text: t, ...MARK }] });
    const answer = { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'ok', ...MARK }] };
    const err = await client.messages
      .create({ model: MODEL, max_tokens: 8, tools, system, messages: [marked('q'), answer, ask('more')] })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, apiMessage: 'A maximum of 4 blocks with cache_control may be provided. Found 5.' });
  });

  it('lets any history through with strict: false', async () => {
    const { api, client } = await fake({ text: 'fine' }, { strict: false });
    const msg = await client.messages.create({ model: MODEL, max_tokens: 8, messages: [ask('a'), ask('b')] });
    expect(msg.content).toEqual([EMPTY_THINKING, { type: 'text', text: 'fine' }]);
    // The new checks are off too: a retired id, a refused parameter, a forged thinking block.
    const forged = { role: 'assistant' as const, content: [{ type: 'thinking' as const, thinking: 'x', signature: 'sig' }, { type: 'text' as const, text: 'y' }] };
    const old = await client.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 8,
      thinking: { type: 'disabled' },
      messages: [ask('a'), forged, ask('b')],
    });
    expect(old.content).toEqual([{ type: 'text', text: 'fine' }]);
    const odd = await client.messages.create({ model: MODEL, max_tokens: 8, messages: [ask('a'), forged, ask('b')], tool_choice: { type: 'any' } });
    expect(odd.stop_reason).toBe('end_turn');
    expect(api.requests.map((r) => [r.status, r.dropped])).toEqual([[200, undefined], [200, undefined], [200, undefined]]);
  });
});

describe('fake Messages API: usage and prompt caching', () => {
  const system = [{ type: 'text' as const, text: filler(1000), ...MARK }];

  it('reports a write, then a read of it on the next turn, in message_start and in the recorded request', async () => {
    const { api, client } = await fake({ text: 'Okay, done.' });
    const turn1 = [{ role: 'user' as const, content: [{ type: 'text' as const, text: filler(100), ...MARK }] }];
    const first = await client.messages.stream({ model: MODEL, max_tokens: 64, system, messages: turn1 }).finalMessage();
    expect(first.usage).toMatchObject({ input_tokens: 0, cache_creation_input_tokens: 1100, cache_read_input_tokens: 0, output_tokens: 3 });

    const turn2 = [
      { role: 'user' as const, content: [{ type: 'text' as const, text: filler(100) }] },
      { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Okay, done.' }] },
      { role: 'user' as const, content: [{ type: 'text' as const, text: filler(20), ...MARK }, { type: 'text' as const, text: filler(7) }] },
    ];
    const second = await client.messages.create({ model: MODEL, max_tokens: 64, system, messages: turn2 });
    expect(second.usage).toMatchObject({ input_tokens: 7, cache_creation_input_tokens: 23, cache_read_input_tokens: 1100, output_tokens: 3 });
    expect(api.requests.map((r) => r.usage)).toEqual([first.usage, second.usage].map((u): unknown => expect.objectContaining({ ...u })));
    expect(sumUsage(api.requests)).toEqual({
      requests: 2,
      input_tokens: 7,
      cache_creation_input_tokens: 1123,
      cache_read_input_tokens: 1100,
      output_tokens: 6,
    });
  });

  it('misses after a one-byte change in the system prompt', async () => {
    const { client } = await fake({ text: 'ok' });
    const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: filler(100), ...MARK }] }];
    await client.messages.create({ model: MODEL, max_tokens: 8, system, messages });
    const changed = [{ type: 'text' as const, text: `${filler(1000).slice(1)}b`, ...MARK }];
    const miss = await client.messages.create({ model: MODEL, max_tokens: 8, system: changed, messages });
    expect(miss.usage).toMatchObject({ cache_read_input_tokens: 0, cache_creation_input_tokens: 1100 });
    const hit = await client.messages.create({ model: MODEL, max_tokens: 8, system, messages });
    expect(hit.usage).toMatchObject({ cache_read_input_tokens: 1100, cache_creation_input_tokens: 0, input_tokens: 0 });
  });

  it('lets the script override single usage fields, and turns caching off on request', async () => {
    const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: filler(100), ...MARK }] }];
    const scripted = await fake({ text: 'ok', usage: { output_tokens: 99 } });
    const a = await scripted.client.messages.create({ model: MODEL, max_tokens: 8, system, messages });
    expect(a.usage).toMatchObject({ input_tokens: 0, cache_creation_input_tokens: 1100, output_tokens: 99 });
    const uncached = await fake({ text: 'ok' }, { cache: false });
    for (let i = 0; i < 2; i++) {
      const b = await uncached.client.messages.create({ model: MODEL, max_tokens: 8, system, messages });
      expect(b.usage).toMatchObject({ input_tokens: 1100, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    }
  });

  it('splits cache writes by ttl in usage.cache_creation, also when the script gives only the total', async () => {
    const hour = { cache_control: { type: 'ephemeral' as const, ttl: '1h' as const } };
    const { client } = await fake({ text: 'ok' });
    const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: filler(100), ...MARK }] }];
    const { usage } = await client.messages
      .stream({ model: MODEL, max_tokens: 8, system: [{ type: 'text', text: filler(1000), ...hour }], messages })
      .finalMessage();
    expect(usage).toMatchObject({
      cache_creation_input_tokens: 1100,
      cache_creation: { ephemeral_5m_input_tokens: 100, ephemeral_1h_input_tokens: 1000 },
    });
    const scripted = await fake({ text: 'ok', usage: { cache_creation_input_tokens: 7 } });
    const s = await scripted.client.messages.create({ model: MODEL, max_tokens: 8, system, messages });
    expect(s.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 7, ephemeral_1h_input_tokens: 0 });
  });

  it('caches from the model\'s minimum: 512 tokens on Sonnet 5.5, 1024 for an id outside the table', async () => {
    const { client } = await fake({ text: 'ok' });
    const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: filler(600), ...MARK }] }];
    const sonnet = await client.messages.create({ model: MODEL, max_tokens: 8, messages });
    expect(sonnet.usage).toMatchObject({ input_tokens: 0, cache_creation_input_tokens: 600 });
    const unknown = await client.messages.create({ model: UNKNOWN, max_tokens: 8, messages });
    expect(unknown.usage).toMatchObject({ input_tokens: 600, cache_creation_input_tokens: 0 });
  });

  it('expires entries by the injected clock', async () => {
    let now = 0;
    const { client } = await fake({ text: 'ok' }, { ttlMs: 1000, now: () => now });
    const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: filler(100), ...MARK }] }];
    await client.messages.create({ model: MODEL, max_tokens: 8, system, messages });
    now = 999;
    expect((await client.messages.create({ model: MODEL, max_tokens: 8, system, messages })).usage.cache_read_input_tokens).toBe(1100);
    now = 2000;
    expect((await client.messages.create({ model: MODEL, max_tokens: 8, system, messages })).usage.cache_read_input_tokens).toBe(0);
  });
});

describe('fake Messages API: latency', () => {
  const latency = { baseMs: 20, msPerUncachedToken: 0.05, outputTokensPerSecond: 2000 };

  it('schedules the first byte by the uncached input and the last by the output rate', async () => {
    const { api, client } = await fake({ text: filler(40) }, { latency });
    const system = [{ type: 'text' as const, text: filler(1200), ...MARK }];
    const messages = [ask(filler(100))];
    const cold = await client.messages.stream({ model: MODEL, max_tokens: 64, system, messages }).finalMessage();
    const warm = await client.messages.create({ model: MODEL, max_tokens: 64, system, messages });
    expect(cold.content).toEqual([EMPTY_THINKING, expect.objectContaining({ type: 'text', text: filler(40) })]);
    expect(warm.usage).toMatchObject({ input_tokens: 100, cache_read_input_tokens: 1200 });
    // Cold: 1300 tokens not read from cache; warm: 100. Forty output tokens at 2000/s take 20 ms.
    expect(api.requests.map((r) => r.delay)).toEqual([
      { firstByteMs: 20 + 0.05 * 1300, lastByteMs: 20 + 0.05 * 1300 + 20 },
      { firstByteMs: 20 + 0.05 * 100, lastByteMs: 20 + 0.05 * 100 + 20 },
    ]);
  });

  it('does not send the first byte before it is due', async () => {
    const { client } = await fake({ text: 'late' }, { latency: { baseMs: 300, msPerUncachedToken: 0, outputTokensPerSecond: 1000 } });
    const started = performance.now();
    const stream = await client.messages.create({ model: MODEL, max_tokens: 8, messages: [ask('go')], stream: true });
    for await (const _ of stream) break;
    // A lower bound only, with slack for timer rounding: a machine can be slow, never early.
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it('spreads the frames over the output time by the characters each carries', () => {
    const timing = { firstByteMs: 100, lastByteMs: 200 };
    expect(frameSchedule(timing, [0, 0, 10, 30, 0, 0], 40)).toEqual([100, 100, 125, 200, 200, 200]);
    // A cut reply keeps the pace of the whole one.
    expect(frameSchedule(timing, [0, 10], 40)).toEqual([100, 125]);
    expect(frameSchedule(timing, [0, 0, 0], 0)).toEqual([100, 100, 200]);
  });

  it('makes no one wait without the option', async () => {
    const { api, client } = await fake({ text: 'quick' });
    await client.messages.create({ model: MODEL, max_tokens: 8, messages: [ask('go')] });
    expect(api.requests[0]?.delay).toBeUndefined();
  });
});

describe('fake Messages API: faults on a reply with thinking', () => {
  const READ: FakeScript = {
    content: [
      { type: 'text', text: 'Reading a.' },
      { type: 'tool_use', id: 'toolu_cut', name: 'read_file', input: { path: 'a.ts' } },
    ],
  };
  const calledBack = {
    role: 'assistant' as const,
    content: [{ type: 'tool_use' as const, id: 'toolu_cut', name: 'read_file', input: {} }],
  };
  const answered = { role: 'user' as const, content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_cut', content: 'ok' }] };

  it('cuts or breaks the stream where told, and does not hold the client to a reply it never got whole', async () => {
    for (const fault of [{ cutAfterChunks: 8 }, { errorEvent: { type: 'overloaded_error', afterChunks: 8 } }]) {
      const { api, client } = await fake((i) => (i === 0 ? { ...READ, ...fault } : { text: 'ok' }));
      const seen: string[] = [];
      const s = client.messages.stream({ model: MODEL, max_tokens: 64, messages: [ask('go')] });
      s.on('streamEvent', (e) => seen.push(e.type === 'content_block_start' ? `start ${e.content_block.type}` : e.type));
      await expect(s.finalMessage()).rejects.toThrow();
      expect(seen).toContain('start tool_use');
      expect(seen).not.toContain('message_stop');
      // A client that kept only the call (and no thinking) is not refused by the echo check.
      const next = await client.messages.create({ model: MODEL, max_tokens: 64, messages: [ask('go'), calledBack, answered] });
      expect(next.stop_reason).toBe('end_turn');
      expect(api.requests.map((r) => r.status)).toEqual([200, 200]);
    }
  });

  it('holds the client to the same reply once it went out whole', async () => {
    const { client } = await fake((i) => (i === 0 ? READ : { text: 'ok' }));
    await client.messages.stream({ model: MODEL, max_tokens: 64, messages: [ask('go')] }).finalMessage();
    const err = await client.messages.create({ model: MODEL, max_tokens: 64, messages: [ask('go'), calledBack, answered] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 400, apiMessage: expect.stringMatching(/^messages\.1: this assistant turn differs from the reply the API gave/) });
  });
});

describe('fake Messages API: concurrent requests', () => {
  it('gives replies that overlap in time their own message and tool call ids', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let waiting = 0;
    const api = await startFakeMessagesApi({
      brain: async () => {
        if (++waiting === 2) release();
        await held;
        return { toolUse: { name: 'read_file', input: { path: 'a' } } };
      },
    });
    servers.push(api);
    const client = new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0 });
    const ask1 = client.messages.create({ model: MODEL, max_tokens: 100, messages: [ask('one')] });
    const ask2 = client.messages.create({ model: MODEL, max_tokens: 100, messages: [ask('two')] });
    const [a, b] = await Promise.all([ask1, ask2]);
    expect(a.id).not.toBe(b.id);
    const callId = (m: Anthropic.Message) => m.content.find((c) => c.type === 'tool_use')?.id;
    expect(callId(a)).toBeDefined();
    expect(callId(a)).not.toBe(callId(b));
  });
});

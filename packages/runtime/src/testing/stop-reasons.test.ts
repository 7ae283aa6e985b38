// Stop reasons through the real SDK: scripted ones (pause_turn and its continuation, refusal with
// its details, the rest passed through) and max_tokens, which the fake enforces by cutting.
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi, type FakeReply } from './index.js';

type Message = Anthropic.MessageParam;

const servers: FakeMessagesApi[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fake(brain: FakeBrain) {
  const api = await startFakeMessagesApi({ brain });
  servers.push(api);
  return { api, client: new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0 }) };
}
const always = (script: FakeReply) => fake(() => script);

const MODEL = 'claude-sonnet-5-5';
const tools: Anthropic.Tool[] = [{ name: 'read_file', input_schema: { type: 'object' } }];
const ask: Message = { role: 'user', content: 'go' };
const summarized = { type: 'adaptive' as const, display: 'summarized' as const };

/** Streams a request; the raw events and the message the SDK assembled. */
async function stream(client: Anthropic, params: Partial<Anthropic.MessageCreateParamsStreaming>) {
  const s = client.messages.stream({ model: MODEL, max_tokens: 1000, messages: [ask], ...params });
  const events: Anthropic.MessageStreamEvent[] = [];
  s.on('streamEvent', (e) => events.push(e));
  return { events, message: await s.finalMessage() };
}

describe('fake Messages API: pause_turn', () => {
  it('accepts the paused reply sent back as the last message, and refuses any other prefill', async () => {
    const { api, client } = await fake((body) =>
      body.messages?.at(-1) && (body.messages.at(-1) as Message).role === 'assistant'
        ? { text: 'Found it.' }
        : { text: 'Searching the web', stopReason: 'pause_turn' },
    );
    const paused = await client.messages.create({ model: MODEL, max_tokens: 100, messages: [ask], thinking: summarized });
    expect(paused.stop_reason).toBe('pause_turn');
    const resumed = await client.messages.create({
      model: MODEL,
      max_tokens: 100,
      thinking: summarized,
      messages: [ask, { role: 'assistant', content: paused.content }],
    });
    expect(resumed.stop_reason).toBe('end_turn');
    expect(resumed.content.at(-1)).toEqual({ type: 'text', text: 'Found it.' });

    // The continuation's blocks belong to the paused message: the merged turn replays cleanly.
    const merged: Message[] = [ask, { role: 'assistant', content: [...paused.content, ...resumed.content] }, { role: 'user', content: 'thanks' }];
    await client.messages.create({ model: MODEL, max_tokens: 100, thinking: summarized, messages: merged });
    expect(api.requests.map((r) => r.status)).toEqual([200, 200, 200]);

    const prefill = 'messages.1: This model does not support assistant message prefill. The conversation must end with a user message.';
    for (const content of [[{ type: 'text' as const, text: 'Well,' }], paused.content.slice(1)]) {
      const err = await client.messages.create({ model: MODEL, max_tokens: 100, messages: [ask, { role: 'assistant', content }] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      expect(err).toMatchObject({ apiMessage: prefill });
    }
  });
});

describe('fake Messages API: max_tokens', () => {
  it('cuts a text reply at max_tokens, thinking counted first, and says max_tokens', async () => {
    const { api, client } = await always({ text: 'x'.repeat(400), thinking: 'y'.repeat(40) });
    const { message } = await stream(client, { max_tokens: 30, thinking: summarized });
    expect(message.stop_reason).toBe('max_tokens');
    // Ten tokens of thinking, then twenty of text: eighty characters.
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'y'.repeat(40), signature: expect.any(String) },
      { type: 'text', text: 'x'.repeat(80) },
    ]);
    expect(message.usage.output_tokens).toBe(30);
    expect(api.requests[0]?.usage?.output_tokens).toBe(30);
    // Under omitted the hidden thinking uses up the budget just the same.
    const hidden = await stream(client, { max_tokens: 30 });
    expect(hidden.message.content[1]).toEqual({ type: 'text', text: 'x'.repeat(80) });
  });

  it('cuts a tool call mid-JSON so its input no longer parses', async () => {
    const { client } = await always({ toolUse: { id: 'toolu_long', name: 'read_file', input: { path: 'p'.repeat(200) } } });
    const { events, message } = await stream(client, { max_tokens: 20, tools });
    const json = events
      .filter((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta')
      .map((e) => (e.type === 'content_block_delta' && e.delta.type === 'input_json_delta' ? e.delta.partial_json : ''))
      .join('');
    expect(json).toBe(`{"path":"${'p'.repeat(71)}`);
    expect(() => JSON.parse(json) as unknown).toThrow();
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
    // The same cut, not streamed: the input that did not arrive whole is empty.
    const whole = await client.messages.create({ model: MODEL, max_tokens: 20, messages: [ask], tools });
    expect(whole.content[1]).toEqual({ type: 'tool_use', id: 'toolu_long', name: 'read_file', input: {} });
  });

  it('lets a script cut its reply anywhere with cutAtOutputTokens, and sends nothing for max_tokens 0', async () => {
    const { client } = await always({ text: 'a'.repeat(100), cutAtOutputTokens: 5 });
    const cut = await client.messages.create({ model: MODEL, max_tokens: 1000, messages: [ask] });
    expect(cut.content).toEqual([{ type: 'thinking', thinking: '', signature: expect.any(String) }, { type: 'text', text: 'a'.repeat(20) }]);
    expect(cut).toMatchObject({ stop_reason: 'max_tokens', usage: { output_tokens: 5 } });
    const none = await client.messages.create({ model: MODEL, max_tokens: 0, messages: [ask] });
    expect(none).toMatchObject({ content: [], stop_reason: 'max_tokens', usage: { output_tokens: 0 } });
    // The script's cut applies whatever max_tokens would allow; without it a reply that fits is whole.
    const fits = await client.messages.create({ model: MODEL, max_tokens: 25, messages: [ask] });
    expect(fits).toMatchObject({ stop_reason: 'max_tokens', usage: { output_tokens: 5 } });
    const { client: roomy } = await always({ text: 'a'.repeat(100) });
    expect(await roomy.messages.create({ model: MODEL, max_tokens: 25, messages: [ask] })).toMatchObject({
      stop_reason: 'end_turn',
      usage: { output_tokens: 25 },
    });
  });
});

describe('fake Messages API: other stop reasons', () => {
  it('sends refusal with stop_details in message_delta and in the whole message', async () => {
    const { client } = await always({
      text: 'I can’t help with that.',
      stopReason: 'refusal',
      stopDetails: { category: 'cyber', explanation: 'Exploit development.' },
    });
    const details = { type: 'refusal', category: 'cyber', explanation: 'Exploit development.' };
    const { events, message } = await stream(client, {});
    const delta = events.find((e) => e.type === 'message_delta');
    expect(delta).toMatchObject({ delta: { stop_reason: 'refusal', stop_details: details } });
    expect(message).toMatchObject({ stop_reason: 'refusal', stop_details: details });
    const whole = await client.messages.create({ model: MODEL, max_tokens: 100, messages: [ask] });
    expect(whole).toMatchObject({ stop_reason: 'refusal', stop_details: details });
  });

  it('sends null stop_details otherwise, and passes the other scripted stop reasons through', async () => {
    const { client } = await fake((_b, i) =>
      i === 0 ? { text: 'So far', stopReason: 'model_context_window_exceeded' } : { text: 'one, two', stopReason: 'stop_sequence', stopSequence: 'three' },
    );
    const full = await client.messages.create({ model: MODEL, max_tokens: 100, messages: [ask] });
    expect(full).toMatchObject({ stop_reason: 'model_context_window_exceeded', stop_details: null, stop_sequence: null });
    const { message } = await stream(client, { stop_sequences: ['three'] });
    expect(message).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'three', stop_details: null });
  });
});

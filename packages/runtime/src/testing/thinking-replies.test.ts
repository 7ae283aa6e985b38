// Thinking in the fake's replies, through the real SDK: where the blocks go, what text they carry
// under each display, and the event sequence a streaming client sees.
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BETA_THINKING_DISPLAY_UPDATES,
  readRedactedData,
  readThinkingSignature,
  startFakeMessagesApi,
  type FakeMessagesApi,
  type FakeReply,
} from './index.js';

const servers: FakeMessagesApi[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fake(script: FakeReply) {
  const api = await startFakeMessagesApi({ brain: () => script });
  servers.push(api);
  return { api, client: new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0 }) };
}

const tools = [{ name: 'read_file', input_schema: { type: 'object' as const } }];
const ask = [{ role: 'user' as const, content: 'read a' }];
const READ_A: FakeReply = {
  content: [
    { type: 'text', text: 'Reading a.' },
    { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
  ],
};
const sig = expect.any(String);

type Display = 'summarized' | 'omitted' | 'updates' | undefined;

/** Streams one request; the raw events in order and the message the SDK assembled. */
async function stream(script: FakeReply, model: string, display: Display, extra: Record<string, unknown> = {}) {
  const { client } = await fake(script);
  const params = {
    model,
    max_tokens: 1000,
    messages: ask,
    tools,
    ...(display && { thinking: { type: 'adaptive' as const, display } }),
    ...extra,
  };
  const events: Record<string, unknown>[] = [];
  const record = (e: unknown) => events.push(e as Record<string, unknown>);
  if (display === 'updates') {
    // The beta display goes through the SDK's beta route, which sends the header from `betas`.
    const s = client.beta.messages.stream({ ...params, betas: [BETA_THINKING_DISPLAY_UPDATES] } as Anthropic.Beta.MessageCreateParamsStreaming);
    s.on('streamEvent', record);
    return { events, message: (await s.finalMessage()) as unknown as Anthropic.Message, client };
  }
  const s = client.messages.stream(params as Anthropic.MessageCreateParamsStreaming);
  s.on('streamEvent', record);
  return { events, message: await s.finalMessage(), client };
}

/** The events of block `index` in a compact form: start type, delta kinds with payload, stop. */
function blockEvents(events: readonly Record<string, unknown>[], index: number): string[] {
  return events
    .filter((e) => e.index === index)
    .map((e) => {
      if (e.type === 'content_block_start') return `start ${(e.content_block as { type: string }).type}`;
      if (e.type === 'content_block_stop') return 'stop';
      const d = e.delta as Record<string, string>;
      return d.type === 'thinking_delta' ? `thinking ${d.thinking}` : d.type === 'signature_delta' ? 'signature' : d.type;
    });
}

describe('fake Messages API: thinking blocks on an adaptive model', () => {
  it('opens with a thinking block holding the text written before the tool call, under display summarized', async () => {
    const { events, message } = await stream(READ_A, 'claude-sonnet-5-5', 'summarized');
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Reading a.', signature: sig },
      { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
    ]);
    expect(events.find((e) => e.type === 'content_block_start')).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    // Text in pieces, the signature just before the block stops, then the tool call at index 1.
    expect(blockEvents(events, 0)).toEqual(['start thinking', 'thinking Readi', 'thinking ng a.', 'signature', 'stop']);
    expect(blockEvents(events, 1)[0]).toBe('start tool_use');
    const signature = (message.content[0] as Anthropic.ThinkingBlock).signature;
    expect(readThinkingSignature(signature, 'Reading a.')).toMatchObject({ kind: 'thinking', model: 'claude-sonnet-5-5' });
    expect(message.stop_reason).toBe('tool_use');
  });

  it('sends the same block with empty text and no thinking_delta under omitted, the default', async () => {
    for (const display of ['omitted', undefined] as const) {
      const { events, message } = await stream(READ_A, 'claude-opus-5-5', display);
      expect(message.content).toEqual([
        { type: 'thinking', thinking: '', signature: sig },
        { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
      ]);
      expect(blockEvents(events, 0)).toEqual(['start thinking', 'signature', 'stop']);
      expect(message.content.some((b) => b.type === 'text')).toBe(false);
    }
  });

  it('under display updates (beta) returns the notes between tool calls but hides the reasoning', async () => {
    const { message } = await stream({ ...READ_A, thinking: 'The user wants a; read it first.' }, 'claude-sonnet-5-5', 'updates');
    expect(message.content).toEqual([
      { type: 'thinking', thinking: '', signature: sig },
      { type: 'thinking', thinking: 'Reading a.', signature: sig },
      { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
    ]);
  });

  it('turns every text before the last tool call into thinking, and keeps text after it', async () => {
    const script: FakeReply = {
      content: [
        { type: 'text', text: 'First a.' },
        { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: {} },
        { type: 'text', text: 'Then b.' },
        { type: 'tool_use', id: 'toolu_b', name: 'read_file', input: {} },
        { type: 'text', text: 'Waiting.' },
      ],
    };
    const { events, message } = await stream(script, 'claude-sonnet-5-5', 'summarized');
    const gist = (b: Anthropic.ContentBlock): [string, string] => [
      b.type,
      b.type === 'thinking' ? b.thinking : b.type === 'text' ? b.text : b.type === 'tool_use' ? b.id : '',
    ];
    expect(message.content.map(gist)).toEqual([
      ['thinking', 'First a.'],
      ['tool_use', 'toolu_a'],
      ['thinking', 'Then b.'],
      ['tool_use', 'toolu_b'],
      ['text', 'Waiting.'],
    ]);
    const starts = events.filter((e) => e.type === 'content_block_start').map((e) => e.index);
    expect(starts).toEqual([0, 1, 2, 3, 4]);
  });

  it("ends a final answer as [thinking, text]: the script's reasoning under summarized, empty otherwise", async () => {
    const final: FakeReply = { text: 'All done.', thinking: 'Both files match.' };
    const shown = await stream(final, 'claude-sonnet-5-5', 'summarized');
    expect(shown.message.content).toEqual([
      { type: 'thinking', thinking: 'Both files match.', signature: sig },
      { type: 'text', text: 'All done.' },
    ]);
    expect(shown.message.stop_reason).toBe('end_turn');
    const hidden = await stream(final, 'claude-sonnet-5-5', 'omitted');
    expect(hidden.message.content).toEqual([{ type: 'thinking', thinking: '', signature: sig }, { type: 'text', text: 'All done.' }]);
    // Hidden thinking is billed all the same: 17 characters of reasoning (5 tokens) and 9 of text (3).
    expect(hidden.message.usage.output_tokens).toBe(8);
    expect(shown.message.usage.output_tokens).toBe(8);
    const bare = await stream({ text: 'All done.' }, 'claude-sonnet-5-5', 'summarized');
    expect(bare.message.content[0]).toEqual({ type: 'thinking', thinking: '', signature: sig });
  });

  it('sends scripted thinking and redacted_thinking blocks signed, in place, redacted ones whole', async () => {
    const script: FakeReply = {
      content: [
        { type: 'thinking', thinking: 'Plan: read a.' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: {} },
      ],
    };
    const { events, message } = await stream(script, 'claude-sonnet-5-5', 'summarized');
    expect(message.content.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'tool_use']);
    expect(message.content[0]).toEqual({ type: 'thinking', thinking: 'Plan: read a.', signature: sig });
    const data = (message.content[1] as Anthropic.RedactedThinkingBlock).data;
    expect(readRedactedData(data)).toMatchObject({ kind: 'redacted_thinking', model: 'claude-sonnet-5-5' });
    expect(blockEvents(events, 1)).toEqual(['start redacted_thinking', 'stop']);
    expect(events.find((e) => e.index === 1 && e.type === 'content_block_start')).toMatchObject({ content_block: { type: 'redacted_thinking', data } });
    // Under omitted the same scripted thinking arrives without its text.
    const hidden = await stream(script, 'claude-sonnet-5-5', 'omitted');
    expect(hidden.message.content[0]).toEqual({ type: 'thinking', thinking: '', signature: sig });
  });

  it('gives a non-streaming request the same blocks whole', async () => {
    const { client } = await fake({ ...READ_A, thinking: 'plan' });
    const msg = await client.messages.create({
      model: 'claude-sonnet-5-5',
      max_tokens: 1000,
      messages: ask,
      tools,
      thinking: { type: 'adaptive', display: 'summarized' },
    });
    expect(msg.content).toEqual([
      { type: 'thinking', thinking: 'plan', signature: sig },
      { type: 'thinking', thinking: 'Reading a.', signature: sig },
      { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
    ]);
    expect(msg.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 });
  });
});

describe('fake Messages API: between_tools and models without thinking', () => {
  it('between_tools: no opening block, the notes before a tool call as thinking with text, a final answer as plain text', async () => {
    const between = { thinking: { type: 'between_tools' } };
    const tool = await stream({ ...READ_A, thinking: 'ignored' }, 'claude-sonnet-5-5', undefined, between);
    expect(tool.message.content).toEqual([
      { type: 'thinking', thinking: 'Reading a.', signature: sig },
      { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
    ]);
    const final = await stream({ text: 'Done.' }, 'claude-sonnet-5-5', undefined, between);
    expect(final.message.content).toEqual([{ type: 'text', text: 'Done.' }]);
  });

  it('between_tools without tools in the request: plain text, even before a scripted tool call', async () => {
    const { client } = await fake(READ_A);
    const msg = await client.messages.create({ model: 'claude-sonnet-5-5', max_tokens: 100, messages: ask, thinking: { type: 'between_tools' } });
    expect(msg.content.map((b) => b.type)).toEqual(['text', 'tool_use']);
  });

  it('gives the blocks as scripted to models without thinking, to thinking disabled, and to unknown ids', async () => {
    for (const [model, extra] of [
      ['claude-opus-4-8', {}],
      ['claude-haiku-5-5', { thinking: { type: 'disabled' } }],
      ['claude-nova-7', {}],
    ] as const) {
      const { message } = await stream({ ...READ_A, thinking: 'never shown' }, model, undefined, extra);
      expect(message.content).toEqual([
        { type: 'text', text: 'Reading a.' },
        { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
      ]);
    }
  });
});

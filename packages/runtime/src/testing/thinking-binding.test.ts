// Preserved thinking through the real SDK: a tool loop that echoes every reply verbatim passes;
// each way of breaking the echo (or the conversation before a block) fails with the message the
// real API gives, or with the fake's echo check where the real API would stay silent.
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import {
  BETA_THINKING_BINDING_CONTROLS,
  startFakeMessagesApi,
  type FakeBrain,
  type FakeMessagesApi,
  type FakeRequestBody,
  type RecordedRequest,
} from './index.js';

type Message = Anthropic.MessageParam;

const servers: FakeMessagesApi[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const SYSTEM = 'You are a careful coding agent.';
const TOOLS: Anthropic.Tool[] = [{ name: 'read_file', input_schema: { type: 'object', properties: { path: { type: 'string' } } } }];

/** Reads a, then b, then answers; keyed on the history so a tampered request gets the same script. */
const LOOP: FakeBrain = (body: FakeRequestBody) => {
  const n = body.messages?.length ?? 0;
  if (n === 1) {
    return {
      thinking: 'Two files; start with a.',
      content: [
        { type: 'text', text: 'Reading a.' },
        { type: 'tool_use', id: 'toolu_a', name: 'read_file', input: { path: 'a.ts' } },
      ],
    };
  }
  if (n === 3) {
    return {
      content: [
        { type: 'text', text: 'Now b.' },
        { type: 'tool_use', id: 'toolu_b', name: 'read_file', input: { path: 'b.ts' } },
      ],
    };
  }
  return { text: 'Both read.' };
};

async function fake(brain: FakeBrain = LOOP) {
  const api = await startFakeMessagesApi({ brain });
  servers.push(api);
  return { api, client: new Anthropic({ apiKey: 'test-key', baseURL: api.url, maxRetries: 0 }) };
}

const base = (model = 'claude-sonnet-5-5') => ({
  model,
  max_tokens: 1000,
  system: SYSTEM,
  tools: TOOLS,
  thinking: { type: 'adaptive' as const, display: 'summarized' as const },
});

const result = (id: string): Message => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: `contents of ${id}` }] });

/** Runs the first two turns, echoing each reply verbatim; the five messages of the third request. */
async function twoTurns(client: Anthropic, model = 'claude-sonnet-5-5'): Promise<Message[]> {
  const messages: Message[] = [{ role: 'user', content: 'read a and b' }];
  for (const id of ['toolu_a', 'toolu_b']) {
    const reply = await client.messages.stream({ ...base(model), messages }).finalMessage();
    messages.push({ role: 'assistant', content: reply.content }, result(id));
  }
  return messages;
}

/** Sends the third request; its reply, or the API error. */
async function third(client: Anthropic, messages: Message[], params: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}) {
  try {
    return await client.messages.create({ ...base(), messages, ...params });
  } catch (err) {
    if (err instanceof Anthropic.APIError) return err;
    throw err;
  }
}

/** A deep copy to tamper with. */
const copy = (m: Message[]): Message[] => structuredClone(m);
const blocksOf = (m: Message): Record<string, unknown>[] => m.content as unknown as Record<string, unknown>[];

const invalid = (path: string) => `${path}: Invalid 'signature' in 'thinking' block.`;
const bound = (path: string) =>
  `${path}: Invalid 'signature' in 'thinking' block. The block is bound to a different conversation. ` +
  `Remove the block, or set 'thinking.block_binding.prefix_mismatch_behavior' to "drop_block".`;

function expect400(reply: unknown, message: string, api: FakeMessagesApi): void {
  expect(reply).toBeInstanceOf(Anthropic.BadRequestError);
  expect(reply).toMatchObject({ status: 400, type: 'invalid_request_error', apiMessage: message });
  expect(api.requests.at(-1)).toMatchObject({ status: 400, error: message });
}

const statuses = (requests: readonly RecordedRequest[]) => requests.map((r) => r.status);

describe('fake Messages API: thinking blocks sent back', () => {
  it('passes a three-request tool loop that sends every reply back unchanged', async () => {
    const { api, client } = await fake();
    const messages = await twoTurns(client);
    expect(blocksOf(messages[1]).map((b) => b.type)).toEqual(['thinking', 'thinking', 'tool_use']);
    const reply = await third(client, messages);
    expect(reply).not.toBeInstanceOf(Error);
    expect((reply as Anthropic.Message).content.at(-1)).toEqual({ type: 'text', text: 'Both read.' });
    expect(statuses(api.requests)).toEqual([200, 200, 200]);
    expect(api.requests.map((r) => r.dropped)).toEqual([[], [], []]);
  });

  it('does not mind key order, moved cache markers or a system prompt spelled as a block', async () => {
    const { api, client } = await fake();
    const messages = copy(await twoTurns(client));
    const mark = { type: 'ephemeral' as const };
    blocksOf(messages[1]).forEach((b, i, all) => {
      // Same values, keys in reverse order.
      all[i] = Object.fromEntries(Object.entries(b).reverse());
    });
    Object.assign(blocksOf(messages[3])[1], { cache_control: mark });
    Object.assign(blocksOf(messages[4])[0], { cache_control: mark });
    const reply = await third(client, messages, { system: [{ type: 'text', text: SYSTEM, cache_control: mark }] });
    expect(reply).not.toBeInstanceOf(Error);
    expect(statuses(api.requests)).toEqual([200, 200, 200]);
  });

  it('refuses the latest turn with its thinking block left out (fake-only echo check)', async () => {
    const { api, client } = await fake();
    const messages = copy(await twoTurns(client));
    blocksOf(messages[3]).shift();
    expect400(
      await third(client, messages),
      'messages.3: this assistant turn differs from the reply the API gave (content.0: expected the thinking block, found a tool_use block); ' +
        'send every assistant turn back unchanged, thinking blocks included',
      api,
    );
  });

  it('takes a turn kept after a client-side summary without its thinking, with nothing else changed', async () => {
    const { api, client } = await fake();
    const messages = await twoTurns(client);
    // The first exchange is summarised; the second is kept, its thinking left out as it was bound
    // to what the summary replaced.
    const kept = copy(messages.slice(3));
    kept[0].content = blocksOf(kept[0]).filter((b) => b.type !== 'thinking') as unknown as Anthropic.ContentBlockParam[];
    const summarised: Message[] = [{ role: 'user', content: 'Summary: a.ts was read.' }, ...kept];
    expect(await third(client, summarised)).not.toBeInstanceOf(Error);
    const edited = copy(summarised);
    blocksOf(edited[1]).at(-1)!.input = { path: 'c.ts' };
    expect(await third(client, edited)).toMatchObject({ status: 400, apiMessage: expect.stringMatching(/^messages\.1: this assistant turn differs from the reply the API gave/) });
    expect(statuses(api.requests)).toEqual([200, 200, 200, 400]);
  });

  it('refuses an earlier turn with a thinking block left out: the blocks after it are bound to what was there', async () => {
    const { api, client } = await fake();
    const messages = copy(await twoTurns(client));
    blocksOf(messages[1]).shift();
    expect400(await third(client, messages), bound('messages.1.content.0'), api);
  });

  it('refuses a thinking block whose text was edited, or whose signature is not the API’s, without the "bound" sentence', async () => {
    const { api, client } = await fake();
    const messages = await twoTurns(client);
    const edited = copy(messages);
    blocksOf(edited[3])[0].thinking = 'Now b!';
    expect400(await third(client, edited), invalid('messages.3.content.0'), api);
    const forged = copy(messages);
    blocksOf(forged[1])[1].signature = Buffer.from('{"k":"thinking"}').toString('base64');
    expect400(await third(client, forged), invalid('messages.1.content.1'), api);
    // drop_block does not help a broken signature.
    expect400(await third(client, forged, { thinking: { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop_block' } } as never }), invalid('messages.1.content.1'), api);
  });

  it('refuses a history whose earlier message, system prompt or tools changed since the blocks were written', async () => {
    const { api, client } = await fake();
    const messages = await twoTurns(client);
    const earlier = copy(messages);
    earlier[0].content = 'read a and c';
    expect400(await third(client, earlier), bound('messages.1.content.0'), api);
    expect400(await third(client, messages, { system: `${SYSTEM} Today is Monday.` }), bound('messages.1.content.0'), api);
    const tools = [{ ...TOOLS[0], description: 'Read a file' }];
    expect400(await third(client, messages, { tools }), bound('messages.1.content.0'), api);
    expect(api.requests.slice(2).every((r) => r.usage === undefined)).toBe(true);
  });

  it('catches an edit the real API would let pass: a tool call changed after the last thinking block', async () => {
    const { api, client } = await fake();
    const messages = copy(await twoTurns(client));
    blocksOf(messages[3])[1].input = { path: 'c.ts' };
    expect400(
      await third(client, messages),
      "messages.3: this assistant turn differs from the reply the API gave (content.1: the tool_use block's `input` changed); " +
        'send every assistant turn back unchanged, thinking blocks included',
      api,
    );
  });
});

describe('fake Messages API: drop_block and blocks of other models', () => {
  it('drops the blocks of a changed conversation under drop_block, and reports them with the binding beta', async () => {
    const { api, client } = await fake();
    const messages = copy(await twoTurns(client));
    messages[0].content = 'read a and c';
    const stream = client.beta.messages.stream({
      ...base(),
      messages,
      thinking: { type: 'adaptive', display: 'summarized', block_binding: { prefix_mismatch_behavior: 'drop_block' } },
      betas: [BETA_THINKING_BINDING_CONTROLS],
    });
    let started: Record<string, unknown> | undefined;
    stream.on('streamEvent', (e) => {
      if (e.type === 'message_start') started = e.message as unknown as Record<string, unknown>;
    });
    const reply = await stream.finalMessage();
    expect(reply.content.at(-1)).toEqual({ type: 'text', text: 'Both read.' });
    const dropped = ['messages.1.content.0', 'messages.1.content.1', 'messages.3.content.0'].map((path) => ({ path, reason: 'prefix_binding_mismatch' }));
    expect(api.requests.at(-1)).toMatchObject({ status: 200, dropped });
    expect(started?.input_transformations).toEqual(dropped.map((d) => ({ type: 'thinking_dropped', ...d })));
    // Dropped blocks are not billed: the same history with no thinking text costs the same.
    const bare = messages.map((m) => (m.role === 'assistant' ? { ...m, content: blocksOf(m).filter((b) => b.type !== 'thinking') } : m));
    const { api: other, client: otherClient } = await fake();
    await otherClient.messages.create({ ...base('claude-nova-7'), thinking: undefined, messages: bare as Message[] });
    expect(api.requests.at(-1)?.usage?.input_tokens).toBe(other.requests[0]?.usage?.input_tokens);
  });

  it('records drop_block drops without the beta but does not report them in the reply', async () => {
    const { api, client } = await fake();
    const messages = copy(await twoTurns(client));
    messages[0].content = 'read a and c';
    const reply = await third(client, messages, { thinking: { type: 'adaptive', block_binding: { prefix_mismatch_behavior: 'drop_block' } } as never });
    expect(reply).not.toHaveProperty('input_transformations');
    expect(api.requests.at(-1)?.dropped).toHaveLength(3);
  });

  it("drops another model's blocks silently when the conversation moves to a new model", async () => {
    const { api, client } = await fake();
    const messages = await twoTurns(client, 'claude-opus-5-5');
    const reply = await third(client, messages, { model: 'claude-sonnet-5-5' });
    expect(reply).not.toBeInstanceOf(Error);
    expect(api.requests.at(-1)?.dropped).toEqual(
      ['messages.1.content.0', 'messages.1.content.1', 'messages.3.content.0'].map((path) => ({ path, reason: 'model_binding_mismatch' })),
    );
    // Fable 5.1 reads Opus 5.5's blocks.
    await third(client, messages, { model: 'claude-fable-5-1' });
    expect(api.requests.at(-1)).toMatchObject({ status: 200, dropped: [] });
  });

  it("replays Haiku 5.5's blocks on other models, and drops other models' blocks on Haiku 5.5", async () => {
    const haiku = await fake();
    const fromHaiku = await twoTurns(haiku.client, 'claude-haiku-5-5');
    await third(haiku.client, fromHaiku, { model: 'claude-sonnet-5-5' });
    expect(haiku.api.requests.at(-1)).toMatchObject({ status: 200, dropped: [] });

    const sonnet = await fake();
    const fromSonnet = await twoTurns(sonnet.client, 'claude-sonnet-5-5');
    await third(sonnet.client, fromSonnet, { model: 'claude-haiku-5-5' });
    expect(sonnet.api.requests.at(-1)).toMatchObject({ status: 200 });
    expect(sonnet.api.requests.at(-1)?.dropped?.map((d) => d.reason)).toEqual(Array(3).fill('model_binding_mismatch'));
  });

  it('verifies blocks statelessly: a fresh fake accepts a history another instance produced', async () => {
    const first = await fake();
    const messages = await twoTurns(first.client);
    const second = await fake();
    const reply = await third(second.client, messages);
    expect(reply).not.toBeInstanceOf(Error);
    expect(second.api.requests[0]).toMatchObject({ status: 200, dropped: [] });
  });

  it('leaves thinking blocks unchecked on a model without preserved thinking', async () => {
    const { api, client } = await fake(() => ({ text: 'ok' }));
    const forged: Message[] = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'mine', signature: 'sig' }, { type: 'text', text: 'hello' }] },
      { role: 'user', content: 'again' },
    ];
    await third(client, forged, { model: 'claude-opus-5', thinking: undefined });
    expect(api.requests.at(-1)?.status).toBe(200);
    expect400(await third(client, forged, { model: 'claude-sonnet-5-5' }), invalid('messages.1.content.0'), api);
  });

  it('checks redacted_thinking data like a signature', async () => {
    const { api, client } = await fake(() => ({ content: [{ type: 'redacted_thinking' }, { type: 'text', text: 'Hidden, then this.' }] }));
    const messages: Message[] = [{ role: 'user', content: 'hi' }];
    const reply = await client.messages.create({ ...base(), messages });
    expect(reply.content.map((b) => b.type)).toEqual(['redacted_thinking', 'text']);
    const next: Message[] = [...messages, { role: 'assistant', content: reply.content }, { role: 'user', content: 'more' }];
    expect(await third(client, next)).not.toBeInstanceOf(Error);
    const altered = copy(next);
    const data = String(blocksOf(altered[1])[0].data);
    blocksOf(altered[1])[0].data = `${data.slice(0, -4)}AAAA`;
    expect400(await third(client, altered), invalid('messages.1.content.0'), api);
  });
});

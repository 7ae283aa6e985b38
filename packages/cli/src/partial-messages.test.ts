// --include-partial-messages: the Messages API stream events rebuilt from a real runtime's events,
// its replies streamed by the real provider from the fake Messages API.
import { AnthropicProvider, LocalSystem, MemoryStore, type AsyncTool } from '@infinity-code/runtime';
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PartialMessages, type StreamEvent } from './partial-messages.js';

const look: AsyncTool = {
  kind: 'async',
  name: 'look',
  description: 'Looks.',
  input_schema: { type: 'object', properties: {} },
  dispatch(_input, ctx) {
    void ctx.respond({ content: 'saw a tree' });
  },
};

let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({
    brain: (body) =>
      (body.messages ?? []).length === 1 ? { text: 'Checking.', toolUse: { name: 'look', input: {} }, chunks: 2 } : { text: 'All good here.', chunks: 3 },
  });
});
afterAll(() => api.close());

describe('partial messages', () => {
  it('are the stream events of each reply: thinking, text and tool calls as blocks with their indexes, then its end', async () => {
    const system = new LocalSystem({ store: new MemoryStore(), model: 'claude-sonnet-5-5', tools: [look], provider: new AnthropicProvider({ apiKey: 'k', baseURL: api.url }) });
    const lines: Array<{ threadId: string; event: StreamEvent }> = [];
    const partial = new PartialMessages((threadId, event) => lines.push({ threadId, event }), 'sess');
    system.subscribe((e) => partial.event(e));
    await system.start();
    await system.sendUserText('root', 'Look.');
    await system.whenIdle();
    await system.close();

    expect(new Set(lines.map((l) => l.threadId))).toEqual(new Set(['root']));
    const events = lines.map((l) => l.event);
    // Two messages, each from message_start to message_stop.
    const starts = events.flatMap((e, i) => (e.type === 'message_start' ? [i] : []));
    expect(starts).toHaveLength(2);
    const [first, second] = [events.slice(0, starts[1]), events.slice(starts[1])];
    for (const m of [first, second]) {
      expect(m[0]).toMatchObject({ type: 'message_start', message: { type: 'message', role: 'assistant', model: 'claude-sonnet-5-5', content: [] } });
      expect(m.at(-1)).toEqual({ type: 'message_stop' });
      // Every block opens before its deltas and closes once, in index order.
      const open = new Set<number>();
      let next = 0;
      for (const e of m) {
        if (e.type === 'content_block_start') {
          expect(e.index).toBe(next++);
          open.add(e.index as number);
        } else if (e.type === 'content_block_delta') expect(open.has(e.index as number)).toBe(true);
        else if (e.type === 'content_block_stop') expect(open.delete(e.index as number)).toBe(true);
      }
      expect(open.size).toBe(0);
    }
    // The first reply: its notes (thinking on this model), then the tool call; ends for tool_use.
    const toolStart = first.find((e) => e.type === 'content_block_start' && (e.content_block as { type: string }).type === 'tool_use');
    expect(toolStart).toMatchObject({ content_block: { type: 'tool_use', name: 'look', input: {} } });
    expect(first.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'tool_use' } });
    const thinking = first.flatMap((e) => (e.type === 'content_block_delta' && (e.delta as { type: string }).type === 'thinking_delta' ? [(e.delta as { thinking: string }).thinking] : []));
    expect(thinking.join('')).toBe('Checking.');
    // The second: its text in text_delta pieces, as they streamed.
    const text = second.flatMap((e) => (e.type === 'content_block_delta' && (e.delta as { type: string }).type === 'text_delta' ? [(e.delta as { text: string }).text] : []));
    expect(text.length).toBeGreaterThan(1);
    expect(text.join('')).toBe('All good here.');
    expect(second.at(-2)).toMatchObject({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: expect.any(Number) } });
  });
});

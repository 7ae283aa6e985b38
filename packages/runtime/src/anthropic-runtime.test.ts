// The runtime driving the real Anthropic SDK against a local server that speaks the Messages API
// over SSE: retries, cut streams and auth failures as the slice sees them.
import { describe, expect, it } from 'vitest';
import { AnthropicProvider } from './anthropic-provider.js';
import { userText } from './input.js';
import { LocalSystem } from './local-system.js';
import { closedLoopbackUrl } from './test-support/closed-port.js';
import { shape, makeStore } from './test-support/harness.js';
import { echoTool } from './test-support/tools.js';
import { startFakeMessagesApi, type FakeBrain } from './testing/index.js';
import type { RuntimeEvent } from './events.js';

async function converse(brain: FakeBrain, tools = [echoTool()]) {
  const api = await startFakeMessagesApi({ brain });
  const { store, cleanup } = makeStore('sqlite');
  const system = new LocalSystem({
    store,
    provider: new AnthropicProvider({ apiKey: 'test-key', baseURL: api.url }),
    tools,
    model: 'claude-test',
    retry: { baseDelayMs: 1, maxDelayMs: 20 },
  });
  const events: RuntimeEvent[] = [];
  system.subscribe((e) => events.push(e));
  await system.send(userText('t1', 'hello', 'u1'));
  await system.whenIdle();
  const thread = await store.loadThread('t1');
  await system.close();
  await api.close();
  cleanup();
  return { thread: thread!, events, requests: api.requests };
}

const hasToolResult = (body: { messages?: unknown[] }) =>
  JSON.stringify(body.messages?.[body.messages.length - 1] ?? '').includes('tool_result');

describe('runtime with the Anthropic provider over SSE', () => {
  it('completes a normal turn and records usage', async () => {
    const r = await converse(() => ({ text: 'Hi! How can I help?', chunks: 5, usage: { input_tokens: 42, output_tokens: 7 } }));
    expect(shape(r.thread.history)).toEqual(['user:text', 'assistant:text']);
    expect(r.thread.history[1].content).toEqual([{ type: 'text', text: 'Hi! How can I help?' }]);
    expect(r.thread.record.usage.input_tokens).toBe(42);
    expect(r.thread.record.contextTokens).toBe(42);
    expect(JSON.stringify(r.requests[0].body.system)).toContain('Thread stack: [\\"t1\\"]');
  });

  it('runs a tool call streamed as input_json_delta and answers after the result', async () => {
    const r = await converse((body) =>
      hasToolResult(body) ? { text: 'Done.' } : { text: 'Running it.', toolUse: { name: 'echo', input: { text: 'hi' } } },
    );
    expect(shape(r.thread.history)).toEqual(['user:text', 'assistant:text+tool_use', 'user:tool_result', 'assistant:text']);
    expect(r.thread.history[1].content[1]).toMatchObject({ type: 'tool_use', name: 'echo', input: { text: 'hi' } });
    const sentResult = JSON.stringify(r.requests[1].body.messages);
    expect(sentResult).toContain('echo: hi');
  });

  it('retries a 429 (honouring retry-after) and a 529, then succeeds', async () => {
    const r = await converse((_b, i) =>
      i === 0 ? { status: 429, retryAfterSeconds: 0 } : i === 1 ? { status: 529 } : { text: 'Finally.' },
    );
    expect(r.requests).toHaveLength(3);
    expect(shape(r.thread.history)).toEqual(['user:text', 'assistant:text']);
    const kinds = r.events.flatMap((e) => (e.type === 'completion-retry' ? [e.kind] : []));
    expect(kinds).toEqual(['rate_limit', 'overloaded']);
  });

  it('retries a stream cut mid-way without duplicating anything in history', async () => {
    const r = await converse((_b, i) =>
      i === 0 ? { text: 'This reply will be cut off half way through.', chunks: 6, cutAfterChunks: 4 } : { text: 'Whole reply.' },
    );
    expect(shape(r.thread.history)).toEqual(['user:text', 'assistant:text']);
    expect(r.thread.history[1].content).toEqual([{ type: 'text', text: 'Whole reply.' }]);
    expect(r.events.some((e) => e.type === 'completion-retry' && e.kind === 'stream_cut')).toBe(true);
  });

  it('reports a 401 once, as a clear auth error, without retrying', async () => {
    const r = await converse(() => ({ status: 401 }));
    expect(r.requests).toHaveLength(1);
    const err = r.events.find((e) => e.type === 'error');
    expect(err).toMatchObject({ kind: 'auth', message: expect.stringContaining('ANTHROPIC_API_KEY') });
    expect(shape(r.thread.history)).toEqual(['user:text']);
  });

  it('an address where nothing listens: a few quick retries, then one unreachable error naming ANTHROPIC_BASE_URL', async () => {
    const url = await closedLoopbackUrl();
    const { store, cleanup } = makeStore('memory');
    const system = new LocalSystem({
      store,
      provider: new AnthropicProvider({ apiKey: 'test-key', baseURL: url }),
      tools: [echoTool()],
      model: 'claude-test',
      retry: { baseDelayMs: 4 },
    });
    const events: RuntimeEvent[] = [];
    system.subscribe((e) => events.push(e));
    try {
      await system.send(userText('t1', 'hello', 'u1'));
      await system.whenIdle();
    } finally {
      await system.close();
      cleanup();
    }
    const retries = events.flatMap((e) => (e.type === 'completion-retry' ? [e.kind] : []));
    expect(retries).toEqual(['unreachable', 'unreachable', 'unreachable']);
    const errors = events.filter((e) => e.type === 'error');
    expect(errors).toEqual([
      expect.objectContaining({ kind: 'unreachable', message: expect.stringContaining(`ANTHROPIC_BASE_URL is set to ${url}`) }),
    ]);
  });
});

// A stream the API stops feeding is given up after the idle timeout, with a clear message and few
// retries; a model that says nothing for a while (keep-alive pings only) is not. Through the real
// SDK against the local fake Messages API.
import { describe, expect, it } from 'vitest';
import { AnthropicProvider } from './anthropic-provider.js';
import type { RetryPolicy } from './completion.js';
import type { RuntimeEvent } from './events.js';
import { userText } from './input.js';
import { LocalSystem } from './local-system.js';
import { makeStore, shape } from './test-support/harness.js';
import { startFakeMessagesApi, type FakeBrain } from './testing/index.js';

async function converse(brain: FakeBrain, retry: Partial<RetryPolicy>) {
  const api = await startFakeMessagesApi({ brain });
  const { store, cleanup } = makeStore('memory');
  const system = new LocalSystem({
    store,
    provider: new AnthropicProvider({ apiKey: 'test-key', baseURL: api.url }),
    tools: [],
    model: 'claude-test',
    retry: { baseDelayMs: 1, maxDelayMs: 2, ...retry },
  });
  const events: RuntimeEvent[] = [];
  system.subscribe((e) => events.push(e));
  try {
    await system.send(userText('t1', 'hello', 'u1'));
    await system.whenIdle();
    const thread = await store.loadThread('t1');
    return { thread: thread!, events, requests: api.requests.length };
  } finally {
    await system.close();
    await api.close();
    cleanup();
  }
}

const ofType = <T extends RuntimeEvent['type']>(events: RuntimeEvent[], type: T) =>
  events.filter((e): e is Extract<RuntimeEvent, { type: T }> => e.type === type);

describe('an idle stream', () => {
  it('keep-alive pings keep a quiet stream going: no retry, the reply as sent', async () => {
    // Silent (but for pings) for three times the idle timeout after message_start.
    // The first answer may wait for the SDK to load: only the silence after it is under test.
    const r = await converse(() => ({ text: 'Thought about it at length.', stallAfterChunks: 1, stallMs: 900, pingEveryMs: 40 }), {
      initTimeoutMs: 10_000,
      stallTimeoutMs: 300,
    });
    expect(ofType(r.events, 'completion-retry')).toEqual([]);
    expect(r.requests).toBe(1);
    expect(shape(r.thread.history)).toEqual(['user:text', 'assistant:text']);
    expect(r.thread.history[1].content).toEqual([{ type: 'text', text: 'Thought about it at length.' }]);
  });

  it('a stream that stalls is given up with a clear message, retried stallRetries times only, the silence told meanwhile', async () => {
    const r = await converse(() => ({ text: 'never finished', stallAfterChunks: 2, stallMs: 60_000 }), {
      initTimeoutMs: 10_000,
      stallTimeoutMs: 300,
      stallRetries: 1,
      maxRetries: 8,
    });
    const message = 'The model API stream stalled: nothing arrived for 300 ms.';
    expect(r.requests).toBe(2);
    expect(ofType(r.events, 'completion-retry').map((e) => [e.kind, e.message])).toEqual([['timeout', message]]);
    expect(ofType(r.events, 'error')).toEqual([expect.objectContaining({ kind: 'timeout', message })]);
    expect(shape(r.thread.history)).toEqual(['user:text']);
    // Each attempt: silent since some moment, then over (the attempt ended) before the next.
    const silence = ofType(r.events, 'completion-silence').map((e) => e.since);
    expect(silence).toHaveLength(4);
    expect(silence.map((s) => (s === null ? null : 'since'))).toEqual(['since', null, 'since', null]);
  });

  it('an API that never answers the request is given up too, saying so', async () => {
    const r = await converse(() => new Promise(() => undefined), { initTimeoutMs: 300, stallTimeoutMs: 300, stallRetries: 0 });
    expect(r.requests).toBe(1);
    expect(ofType(r.events, 'error')).toEqual([
      expect.objectContaining({ kind: 'timeout', message: 'The model API did not answer: nothing arrived for 300 ms after the request.' }),
    ]);
  });
});

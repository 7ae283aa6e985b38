// --fallback-model over the real provider and the runtime's retry loop, against the fake Messages API.
import { AnthropicProvider, LocalSystem, MemoryStore, type RuntimeEvent } from '@infinity-code/runtime';
import { startFakeMessagesApi, type FakeMessagesApi } from '@infinity-code/runtime/testing';
import type { Effort } from '@infinity-code/runtime/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OVERLOADS_BEFORE_FALLBACK, withFallback } from './fallback-model.js';

const OVERLOADED = 'claude-opus-5-5';
const UNKNOWN = 'claude-nonesuch-9';
let api: FakeMessagesApi;
beforeAll(async () => {
  api = await startFakeMessagesApi({
    brain: (body) => (body.model === OVERLOADED ? { status: 529 } : body.model === UNKNOWN ? { status: 404 } : { text: `Answer from ${body.model}.` }),
  });
});
afterAll(() => api.close());

/** A runtime on the session's model refs (as AgentSession builds it), its provider watched for the fallback. */
async function session(model: string, fallback: string, effort?: Effort) {
  const ref = { current: model };
  const effortRef: { current: Effort | undefined } = { current: effort };
  const switches: string[] = [];
  const provider = withFallback(new AnthropicProvider({ apiKey: 'test-key', baseURL: api.url }), {
    fallback,
    model: ref,
    effort: effortRef,
    onSwitch: (from, to, why) => switches.push(`${from} -> ${to}: ${why}`),
  });
  const system = new LocalSystem({
    store: new MemoryStore(),
    provider,
    model: () => ref.current,
    effort: () => effortRef.current,
    retry: { baseDelayMs: 1, maxDelayMs: 2 },
  });
  const events: RuntimeEvent[] = [];
  system.subscribe((e) => events.push(e));
  await system.start();
  /** One user message to thread `t`, answered (or failed). */
  const ask = async (thread: string) => {
    await system.sendUserText(thread, 'Hello.');
    await system.whenIdle();
  };
  const finished = () => events.flatMap((e) => (e.type === 'completion-finished' ? [e.model] : []));
  const errors = () => events.flatMap((e) => (e.type === 'error' ? [e.kind] : []));
  return { ref, effortRef, switches, ask, finished, errors, close: () => system.close() };
}

describe('--fallback-model', () => {
  it(`takes over after ${OVERLOADS_BEFORE_FALLBACK} overloaded answers in a row, for this completion's retry and every later one`, async () => {
    const s = await session(OVERLOADED, 'claude-haiku-5-5');
    const from = api.requests.length;
    await s.ask('t1');
    // The usage is the fallback's: priced and reported with the model that answered.
    expect(s.finished()).toEqual(['claude-haiku-5-5']);
    expect(s.errors()).toEqual([]);
    const models = api.requests.slice(from).map((r) => [r.body.model, r.status]);
    expect(models).toEqual([
      [OVERLOADED, 529],
      [OVERLOADED, 529],
      [OVERLOADED, 529],
      ['claude-haiku-5-5', 200],
    ]);
    expect(s.switches).toEqual([`${OVERLOADED} -> claude-haiku-5-5: ${OVERLOADED} was overloaded 3 times in a row`]);
    expect(s.ref.current).toBe('claude-haiku-5-5');
    // The next completion, another thread's too, goes to the fallback from the start.
    const next = api.requests.length;
    await s.ask('t2');
    expect(s.finished()).toEqual(['claude-haiku-5-5', 'claude-haiku-5-5']);
    expect(api.requests.slice(next).map((r) => r.body.model)).toEqual(['claude-haiku-5-5']);
    await s.close();
  });

  it('takes over at once when the API does not know the model; an effort the fallback refuses is dropped', async () => {
    const s = await session(UNKNOWN, 'claude-opus-4-8', 'high');
    const from = api.requests.length;
    await s.ask('t1');
    expect(s.finished()).toEqual(['claude-opus-4-8']);
    expect(api.requests.slice(from).map((r) => [r.body.model, r.status])).toEqual([
      [UNKNOWN, 404],
      ['claude-opus-4-8', 200],
    ]);
    expect(s.switches).toEqual([`${UNKNOWN} -> claude-opus-4-8: the model API does not know ${UNKNOWN} (404)`]);
    expect(s.effortRef.current).toBeUndefined();
    expect(api.requests.at(-1)!.body.output_config).toBeUndefined();
    await s.close();
  });

  it('makes no switch when the session is on the fallback already: the overload goes to the retry budget', async () => {
    const s = await session(OVERLOADED, OVERLOADED);
    const from = api.requests.length;
    await s.ask('t1');
    expect(s.errors()).toEqual(['overloaded']);
    expect(s.switches).toEqual([]);
    // The first attempt and the runtime's 8 retries.
    expect(api.requests.length - from).toBe(9);
    await s.close();
  });
});

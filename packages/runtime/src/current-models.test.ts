// The runtime on today's models, end to end through the real SDK and the fake Messages API, which
// signs every thinking block, checks each one sent back against its model and the conversation
// before it, and refuses what current models refuse. Every request of every scenario must pass.
import { describe, expect, it } from 'vitest';
import { AnthropicProvider } from './anthropic-provider.js';
import type { RuntimeEvent } from './events.js';
import { userText } from './input.js';
import { LocalSystem } from './local-system.js';
import { MODELS } from './models.js';
import { SqliteStore } from './sqlite-store.js';
import type { RuntimeStore } from './store.js';
import type { SystemOptions } from './system-options.js';
import { makeStore, type StoreKind } from './test-support/harness.js';
import { echoTool, heldTool } from './test-support/tools.js';
import { threadStackOf } from './thread-identity.js';
import { startFakeMessagesApi, type FakeBrain, type FakeMessagesApi, type FakeRequestBody, type RecordedRequest } from './testing/index.js';

type Block = { type: string; [k: string]: unknown };
type Msg = { role: string; content: Block[] };

const messagesOf = (body: FakeRequestBody) => (body.messages ?? []) as Msg[];
const resultsIn = (body: FakeRequestBody) => messagesOf(body).flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
const lastTextOf = (body: FakeRequestBody) =>
  JSON.stringify(messagesOf(body).at(-1)?.content ?? []);
const stackOf = (body: FakeRequestBody) => {
  const system = Array.isArray(body.system) ? (body.system as Array<{ text: string }>).map((b) => b.text).join('\n') : body.system;
  return threadStackOf({ system, messages: body.messages }) ?? [];
};

const CURRENT = MODELS.filter((m) => m.status.kind === 'current').map((m) => m.id);

/** Nothing a current model refuses was ever sent, and every request was answered. */
function expectClean(requests: RecordedRequest[]): void {
  expect(requests.length).toBeGreaterThan(0);
  for (const r of requests) {
    expect(r.error, `request ${requests.indexOf(r)}`).toBeUndefined();
    expect(r.status).toBe(200);
    const b = r.body;
    for (const key of ['temperature', 'top_p', 'top_k', 'tool_choice']) expect(b).not.toHaveProperty(key);
    expect(JSON.stringify(b.thinking ?? {})).not.toMatch(/budget_tokens|disabled|enabled/);
    expect(b.max_tokens).toBeLessThanOrEqual(128_000);
  }
}

/** How the next process opens the store: the same file anew, or the same memory. */
function reopener(kind: StoreKind, store: RuntimeStore): () => RuntimeStore {
  if (kind === 'memory') return () => store;
  const path = (store as SqliteStore).path;
  return () => new SqliteStore({ path });
}

interface Run {
  api: FakeMessagesApi;
  store: RuntimeStore;
  events: RuntimeEvent[];
  system: LocalSystem;
  done(): Promise<void>;
}

async function start(storeKind: StoreKind, brain: FakeBrain, opts: Partial<SystemOptions> = {}, shared?: { api: FakeMessagesApi; store: RuntimeStore; cleanup(): void }): Promise<Run> {
  const api = shared?.api ?? (await startFakeMessagesApi({ brain }));
  const made = shared ?? { ...makeStore(storeKind), api };
  const events: RuntimeEvent[] = [];
  const system = new LocalSystem({
    store: made.store,
    provider: new AnthropicProvider({ apiKey: 'test-key', baseURL: api.url }),
    tools: [echoTool()],
    model: 'claude-sonnet-5-5',
    retry: { baseDelayMs: 1, maxDelayMs: 5 },
    ...opts,
  });
  system.subscribe((e) => events.push(e));
  await system.start();
  return {
    api,
    store: made.store,
    events,
    system,
    async done() {
      await system.close();
      await api.close();
      made.cleanup();
    },
  };
}

/** Reads, then echoes twice in one reply, then answers: three requests, the last two carrying thinking. */
const toolLoop: FakeBrain = (body) => {
  const n = resultsIn(body);
  if (n === 0) return { text: 'Echoing a first.', toolUse: { name: 'echo', input: { text: 'a' } } };
  if (n === 1) {
    return {
      content: [
        { type: 'text', text: 'Now b and c together.' },
        { type: 'tool_use', name: 'echo', input: { text: 'b' } },
        { type: 'tool_use', name: 'echo', input: { text: 'c' } },
      ],
    };
  }
  return { text: 'All echoed.', thinking: 'Three echoes done.' };
};

describe.each<StoreKind>(['memory', 'sqlite'])('today\'s models with the %s store', (storeKind) => {
  it.each(CURRENT)('a tool loop with parallel calls on %s keeps every thinking block and passes every check', async (model) => {
    const run = await start(storeKind, toolLoop, { model });
    await run.system.send([userText('t', 'echo a, b, c', 'u1')]);
    await run.system.whenIdle();
    const requests = run.api.requests;
    expectClean(requests);
    expect(requests).toHaveLength(3);
    expect(requests.every((r) => r.body.model === model)).toBe(true);
    const { history } = (await run.store.loadThread('t'))!;
    // The replies as the API gave them: thinking first, the notes inside it, signature kept.
    expect(history[1].content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
    expect(history[1].content[0]).toMatchObject({ thinking: 'Echoing a first.', signature: expect.any(String) });
    expect(history[3].content.map((b) => b.type)).toEqual(['thinking', 'tool_use', 'tool_use']);
    // Sent back byte for byte (markers aside) in every later request.
    const sent = messagesOf(requests[2].body);
    const unmarked = (m: Msg) => ({ role: m.role, content: m.content.map(({ cache_control: _, ...b }) => b) });
    expect(unmarked(sent[1])).toEqual(history[1]);
    expect(unmarked(sent[3])).toEqual(history[3]);
    // Both parallel results in one message, in call order.
    expect(sent[4].content.map((b) => b.type)).toEqual(['tool_result', 'tool_result']);
    expect(requests.every((r) => (r.dropped ?? []).length === 0)).toBe(true);
    await run.done();
  });

  it('a child\'s first request carries the parent\'s thinking unchanged and passes the prefix check', async () => {
    const brain: FakeBrain = (body) => {
      const stack = stackOf(body);
      if (stack.length === 1) {
        if (lastTextOf(body).includes('Report from child')) return { text: 'The child reported.' };
        if (resultsIn(body) > 0) return { toolUse: { name: 'sleep_until_event_or_input', input: {} } };
        return { text: 'Delegating.', toolUse: { name: 'spawn_thread', input: { instructions: 'echo z', child_of: stack } } };
      }
      if (resultsIn(body) === 1) return { text: 'Echoing z.', toolUse: { name: 'echo', input: { text: 'z' } } };
      return { toolUse: { name: 'close_thread', input: { thread_id: stack.at(-1), report_to_parent: 'echoed z' } } };
    };
    const run = await start(storeKind, brain);
    await run.system.send([userText('root', 'delegate', 'u1')]);
    await run.system.whenIdle();
    expectClean(run.api.requests);
    const childFirst = run.api.requests.find((r) => stackOf(r.body).length === 2)!;
    const parent = (await run.store.loadThread('root'))!.history;
    const inherited = messagesOf(childFirst.body)[1];
    expect(inherited.content[0]).toMatchObject({ type: 'thinking', thinking: 'Delegating.' });
    expect(inherited.content.map(({ cache_control: _, ...b }) => b)).toEqual(parent[1].content);
    expect(run.api.requests.every((r) => (r.dropped ?? []).length === 0)).toBe(true);
    await run.done();
  });

  it('a crash mid-loop, then a restart on the same store, goes on with the same blocks', async () => {
    const held = heldTool();
    const brain: FakeBrain = (body) =>
      resultsIn(body) === 0 ? { text: 'Starting the slow one.', toolUse: { name: 'hold', input: {} } } : { text: 'Finished after the restart.' };
    const first = await start(storeKind, brain, { tools: [held] });
    await first.system.send([userText('t', 'go', 'u1')]);
    await first.system.whenIdle({ ignoreRunningTools: true });
    const reopen = reopener(storeKind, first.store);
    await first.system.close();
    // A new process: the same store (and API), a new system; the held call died with the old one.
    const second = await start(storeKind, brain, { tools: [heldTool()] }, { api: first.api, store: reopen(), cleanup: () => undefined });
    await second.system.whenIdle();
    expectClean(first.api.requests);
    expect(first.api.requests).toHaveLength(2);
    const resumed = messagesOf(first.api.requests[1].body);
    expect(resumed[1].content[0]).toMatchObject({ type: 'thinking', thinking: 'Starting the slow one.' });
    expect((await second.store.loadThread('t'))!.history.at(-1)?.content).toContainEqual({ type: 'text', text: 'Finished after the restart.' });
    await second.done();
  });

  it('compaction, then more turns: kept turns lose only thinking bound to what the summary replaced', async () => {
    const brain: FakeBrain = (body) => {
      const last = lastTextOf(body);
      if (last.includes('compaction thread')) return { text: 'Summary: we echoed a and b.' };
      if (resultsIn(body) === 0 && last.includes('echo a')) return { text: 'Echoing a.', toolUse: { name: 'echo', input: { text: 'a' } } };
      return { text: `Answered: ${last.slice(-20)}` };
    };
    const run = await start(storeKind, brain);
    await run.system.send([userText('t', 'echo a', 'u1')]);
    await run.system.whenIdle();
    await run.system.compact('t');
    await run.system.whenIdle();
    await run.system.send([userText('t', 'and now?', 'u2')]);
    await run.system.whenIdle();
    await run.system.send([userText('t', 'once more', 'u3')]);
    await run.system.whenIdle();
    expectClean(run.api.requests);
    const last = messagesOf(run.api.requests.at(-1)!.body);
    expect(JSON.stringify(last[0])).toContain('Summary: we echoed a and b.');
    // The turn made after the switch keeps its thinking in the next request.
    expect(last.at(-2)?.content[0]).toMatchObject({ type: 'thinking' });
    expect(run.events.some((e) => e.type === 'compaction-applied')).toBe(true);
    await run.done();
  });

  it('a /model switch mid-conversation: the other model\'s blocks are dropped by the API, not an error', async () => {
    const model = { current: 'claude-sonnet-5-5' };
    const brain: FakeBrain = (body) => (resultsIn(body) === 0 ? { text: 'On Sonnet.', toolUse: { name: 'echo', input: { text: 'a' } } } : { text: `Now on ${String(body.model)}.` });
    const run = await start(storeKind, brain, { model: () => model.current });
    await run.system.send([userText('t', 'one', 'u1')]);
    await run.system.whenIdle({ ignoreRunningTools: true });
    model.current = 'claude-opus-5-5';
    await run.system.whenIdle();
    expectClean(run.api.requests);
    const onOpus = run.api.requests.filter((r) => r.body.model === 'claude-opus-5-5');
    expect(onOpus.length).toBeGreaterThan(0);
    expect(onOpus[0].dropped).toEqual([{ path: 'messages.1.content.0', reason: 'model_binding_mismatch' }]);
    await run.done();
  });

  it('each stop reason through the API: a cut call never runs, a cut answer goes on, a refusal stops, a paused turn resumes', async () => {
    const echo = echoTool();
    const brain: FakeBrain = (body) => {
      const last = lastTextOf(body);
      if (last.includes('split')) return { text: 'Writing it in parts.' };
      if (last.includes('cut call')) {
        return { content: [{ type: 'tool_use', name: 'echo', input: { text: 'x'.repeat(4000) } }], cutAtOutputTokens: 200 };
      }
      if (last.includes('Continue exactly')) return { text: 'and the end.' };
      if (last.includes('long answer')) return { text: 'The start of the answer', stopReason: 'max_tokens' };
      if (last.includes('refuse me')) return { text: 'No.', stopReason: 'refusal', stopDetails: { category: 'cyber', explanation: 'Malware.' } };
      if (messagesOf(body).at(-1)?.role === 'assistant') return { text: 'Resumed.' };
      return { text: 'Searching.', stopReason: 'pause_turn' };
    };
    const run = await start(storeKind, brain, { tools: [echo] });
    for (const [id, task] of [['u1', 'cut call'], ['u2', 'long answer'], ['u3', 'pause please'], ['u4', 'refuse me']]) {
      await run.system.send([userText('t', task, id)]);
      await run.system.whenIdle();
    }
    expectClean(run.api.requests);
    expect(echo.log).toHaveLength(0);
    const stops = run.events.flatMap((e) => (e.type === 'completion-finished' ? [e.stopReason] : []));
    expect(stops).toEqual(['max_tokens', 'end_turn', 'max_tokens', 'end_turn', 'pause_turn', 'end_turn', 'refusal']);
    const errors = run.events.filter((e) => e.type === 'error');
    expect(errors).toEqual([expect.objectContaining({ kind: 'refusal', message: expect.stringContaining('Malware.') })]);
    await run.done();
  });

  it('a full context window mid-answer: compacted, then the answer goes on, every request passing the checks', async () => {
    const brain: FakeBrain = (body) => {
      const last = lastTextOf(body);
      if (last.includes('compaction thread')) return { text: 'Summary: a long report was being written.' };
      if (last.includes('context window is full')) return { text: 'The rest of the report.' };
      if (resultsIn(body) === 0) return { text: 'Reading first.', toolUse: { name: 'echo', input: { text: 'a' } } };
      return { text: 'Report part one', stopReason: 'model_context_window_exceeded' };
    };
    const run = await start(storeKind, brain);
    await run.system.send([userText('t', 'write the report', 'u1')]);
    await run.system.whenIdle();
    expectClean(run.api.requests);
    const stops = run.events.flatMap((e) => (e.type === 'completion-finished' && e.threadId === 't' ? [e.stopReason] : []));
    expect(stops).toEqual(['tool_use', 'model_context_window_exceeded', 'end_turn']);
    expect(run.events.some((e) => e.type === 'compaction-applied')).toBe(true);
    const { history } = (await run.store.loadThread('t'))!;
    expect(history.at(-1)?.content.at(-1)).toEqual({ type: 'text', text: 'The rest of the report.' });
    await run.done();
  });
});

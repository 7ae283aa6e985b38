// Prompt caching as the real service does it, through the real SDK: the fake Messages API keeps a
// cache of prefixes at the breakpoints the provider sends and reports the usage split. The runtime
// must send byte-identical tools and system for every thread, and breakpoints such that each
// request reads what the thread (or, for a child's first request, its parent) sent before.
import { describe, expect, it } from 'vitest';
import { AnthropicProvider } from './anthropic-provider.js';
import { userText } from './input.js';
import { LocalSystem } from './local-system.js';
import { makeStore } from './test-support/harness.js';
import { echoTool } from './test-support/tools.js';
import { threadStackOf } from './thread-identity.js';
import { blockTokens, startFakeMessagesApi, type FakeReply, type FakeRequestBody, type RecordedRequest } from './testing/index.js';

// Long enough that tools + system pass the 1,024-token minimum of a cacheable prefix.
const BASE = `You are a careful test agent. ${'Follow the house rules on every change you make. '.repeat(90)}`;

function callsSoFar(body: FakeRequestBody): number {
  return JSON.stringify(body.messages ?? []).split('"type":"tool_use"').length - 1;
}

function brain(body: FakeRequestBody): FakeReply {
  const stack = threadStackOf(body) ?? [];
  if (stack.length > 1) {
    return { content: [{ type: 'tool_use', name: 'close_thread', input: { thread_id: stack.at(-1), report_to_parent: 'did my part' } }] };
  }
  const calls = callsSoFar(body);
  if (calls === 0) return { content: [{ type: 'text', text: 'Looking first.' }, { type: 'tool_use', name: 'echo', input: { text: 'look' } }] };
  if (calls === 1) {
    return {
      content: [
        { type: 'text', text: 'Two children, one for each half.' },
        { type: 'tool_use', name: 'spawn_thread', input: { instructions: 'do the first half', child_of: stack } },
        { type: 'tool_use', name: 'spawn_thread', input: { instructions: 'do the second half', child_of: stack } },
      ],
    };
  }
  return { text: 'Waiting for, or done with, the children.' };
}

const total = (r: RecordedRequest) => r.usage!.input_tokens + r.usage!.cache_creation_input_tokens + r.usage!.cache_read_input_tokens;

/** What a child's first request holds beyond its own first message: what it inherited. */
function inherited(r: RecordedRequest): number {
  const own = (r.body.messages ?? []).at(-1) as { content: unknown[] };
  return total(r) - own.content.reduce<number>((n, b) => n + blockTokens(b), 0);
}

describe('prompt caching through the Anthropic provider', () => {
  it('reads each request\'s previous prefix from cache, and a child\'s first request reads what its parent sent', async () => {
    const api = await startFakeMessagesApi({ brain });
    const { store, cleanup } = makeStore('sqlite');
    const system = new LocalSystem({
      store,
      provider: new AnthropicProvider({ apiKey: 'test-key', baseURL: api.url }),
      tools: [echoTool()],
      model: 'claude-test',
      systemPrompt: BASE,
    });
    await system.send(userText('root', 'split the work', 'u1'));
    await system.whenIdle();
    await system.close();
    await api.close();
    cleanup();

    const requests = api.requests.filter((r) => r.path === '/v1/messages');
    for (const r of requests) expect(r.status, r.error).toBe(200);
    // One cached prefix for every thread: tools and system byte for byte the same.
    const prefixes = new Set(requests.map((r) => JSON.stringify([r.body.tools, r.body.system])));
    expect(prefixes.size).toBe(1);

    const byThread = (n: number) => requests.filter((r) => (threadStackOf(r.body) ?? []).length === n);
    const [first, second, ...laterRoot] = byThread(1);
    const children = byThread(2);
    expect(children.length).toBeGreaterThanOrEqual(2);
    expect(laterRoot.length).toBeGreaterThan(0);

    // The first request writes its whole prefix; the second reads all of it back.
    expect(first.usage!.cache_read_input_tokens).toBe(0);
    expect(first.usage!.cache_creation_input_tokens).toBe(total(first));
    expect(second.usage!.cache_read_input_tokens).toBe(total(first));

    // Each child's first request reads at least everything its parent had sent before the
    // spawning reply (the parent's second request), and together they read the reply too.
    const firstOfChild = new Map<string, RecordedRequest>();
    for (const r of children) {
      const id = threadStackOf(r.body)!.at(-1)!;
      if (!firstOfChild.has(id)) firstOfChild.set(id, r);
    }
    expect(firstOfChild.size).toBe(2);
    for (const r of firstOfChild.values()) {
      expect(r.usage!.cache_read_input_tokens).toBeGreaterThanOrEqual(total(second));
      expect(r.usage!.cache_read_input_tokens / inherited(r)).toBeGreaterThanOrEqual(0.9);
    }
  });
});

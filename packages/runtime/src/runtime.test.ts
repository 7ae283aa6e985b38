import { describe, expect, it } from 'vitest';
import { ModelError } from './errors.js';
import { toolResult, userText } from './input.js';
import type { CompletionRequest } from './provider.js';
import type { ScriptedReply } from './scripted-provider.js';
import { INTERRUPTED_BY_USER } from './wording.js';
import { makeHarness, shape, type Mode, type StoreKind } from './test-support/harness.js';
import { echoTool, heldTool } from './test-support/tools.js';
import type { SyncTool } from './tool.js';

const last = (r: CompletionRequest) => r.messages[r.messages.length - 1];
const lastIsToolResult = (r: CompletionRequest) => last(r).content.some((c) => c.type === 'tool_result');

/** Calls `echo` once per user message, then answers in text. */
function echoBrain(r: CompletionRequest): ScriptedReply {
  if (lastIsToolResult(r)) return { text: 'The tool answered.' };
  return { text: 'Let me run the tool.', toolCall: { name: 'echo', input: { text: 'hi' } } };
}

const combos: Array<[Mode, StoreKind]> = [
  ['local', 'memory'],
  ['local', 'sqlite'],
  ['step', 'memory'],
  ['step', 'sqlite'],
];

describe.each(combos)('runtime in %s mode with the %s store', (mode, storeKind) => {
  it('answers user text with one streamed, buffered assistant turn', async () => {
    const h = makeHarness(mode, storeKind, { brain: () => ({ text: 'Hello there, human.', chunks: 5 }) });
    await h.send(userText('t1', 'hi', 'u1'));
    await h.settle();
    const t = await h.store.loadThread('t1');
    expect(shape(t!.history)).toEqual(['user:text', 'assistant:text']);
    expect(t!.history[1].content).toEqual([{ type: 'text', text: 'Hello there, human.' }]);
    const deltas = h.events.filter((e) => e.type === 'text-delta');
    expect(deltas.length).toBe(5);
    expect(t!.record.completions).toBe(1);
    await h.close();
  });

  it('runs an async tool round trip through the queue', async () => {
    const tool = echoTool();
    const h = makeHarness(mode, storeKind, { brain: echoBrain, tools: [tool] });
    await h.send(userText('t1', 'go', 'u1'));
    await h.settle();
    const t = await h.store.loadThread('t1');
    expect(shape(t!.history)).toEqual([
      'user:text',
      'assistant:text+tool_use',
      'user:tool_result',
      'assistant:text',
    ]);
    expect(t!.history[2].content[0]).toMatchObject({ type: 'tool_result', content: [{ text: 'echo: hi' }] });
    expect(tool.log).toHaveLength(1);
    expect(t!.record.batch).toEqual([]);
    await h.close();
  });

  it('commits the turn holding a tool call before dispatching it', async () => {
    let seenAtDispatch: string[] = [];
    let storeRef: () => Promise<string[]> = async () => [];
    const tool = echoTool();
    const inner = tool.dispatch.bind(tool);
    tool.dispatch = async (input, ctx) => {
      seenAtDispatch = await storeRef();
      void inner(input, ctx);
    };
    const h = makeHarness(mode, storeKind, { brain: echoBrain, tools: [tool] });
    storeRef = async () => {
      const t = await h.store.loadThread('t1');
      return [...shape(t!.history), `pending:${t!.record.batch[0]?.dispatched}`];
    };
    await h.send(userText('t1', 'go', 'u1'));
    await h.settle();
    expect(seenAtDispatch).toEqual(['user:text', 'assistant:text+tool_use', 'pending:true']);
    const order = h.events
      .filter((e) => e.type === 'turn-committed' || e.type === 'tool-dispatched')
      .map((e) => e.type);
    expect(order.slice(0, 2)).toEqual(['turn-committed', 'tool-dispatched']);
    await h.close();
  });

  it('processes an input delivered twice once', async () => {
    let completions = 0;
    const h = makeHarness(mode, storeKind, {
      brain: () => {
        completions++;
        return { text: 'ok' };
      },
    });
    await h.send(userText('t1', 'hello', 'same-id'));
    await h.settle();
    await h.send(userText('t1', 'hello', 'same-id'));
    await h.settle();
    await h.send(userText('t1', 'hello', 'same-id'), userText('t1', 'hello', 'same-id'));
    await h.settle();
    const t = await h.store.loadThread('t1');
    expect(shape(t!.history)).toEqual(['user:text', 'assistant:text']);
    expect(completions).toBe(1);
    await h.close();
  });

  it('drops a stale tool result that answers no pending call', async () => {
    let completions = 0;
    const h = makeHarness(mode, storeKind, {
      brain: () => {
        completions++;
        return { text: 'ok' };
      },
    });
    await h.send(userText('t1', 'hello', 'u1'));
    await h.settle();
    await h.send(toolResult('t1', 'toolu_nobody_called', [{ type: 'text', text: 'late' }]));
    await h.settle();
    const t = await h.store.loadThread('t1');
    expect(shape(t!.history)).toEqual(['user:text', 'assistant:text']);
    expect(completions).toBe(1);
    await h.close();
  });

  it('lets user text interrupt a pending call and drops the late result', async () => {
    const tool = heldTool();
    const h = makeHarness(mode, storeKind, {
      brain: (r) =>
        last(r).content.some((c) => c.type === 'text' && c.text === 'start')
          ? { text: 'Starting.', toolCall: { name: 'hold', input: {} } }
          : { text: 'Understood.' },
      tools: [tool],
    });
    await h.send(userText('t1', 'start', 'u1'));
    await h.settleSlices();
    expect(tool.held.size).toBe(1);
    await h.send(userText('t1', 'never mind', 'u2'));
    await h.settleSlices();
    const [callId, respond] = [...tool.held][0];
    expect(tool.cancelled.map((c) => c.call.id)).toEqual([callId]);
    await respond('finally done');
    await h.settleSlices();
    const t = await h.store.loadThread('t1');
    expect(shape(t!.history)).toEqual([
      'user:text',
      'assistant:text+tool_use',
      'user:tool_result',
      'user:text',
      'assistant:text',
    ]);
    expect(t!.history[2].content[0]).toMatchObject({
      tool_use_id: callId,
      is_error: true,
      content: [{ text: INTERRUPTED_BY_USER }],
    });
    expect(h.events.some((e) => e.type === 'input-dropped' && e.reason === 'stale')).toBe(true);
    await h.close();
  });

  it('turns bad tool calls into error results the model reads, then carries on', async () => {
    const seen: string[] = [];
    const add: SyncTool = {
      kind: 'sync',
      name: 'add',
      description: 'Add two numbers.',
      input_schema: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      execute: (input) => ({ content: String((input.a as number) + (input.b as number)) }),
    };
    const script: ScriptedReply[] = [
      { toolCall: { name: 'no_such_tool', input: {} } },
      { toolCall: { name: 'receive_event__injected', input: {} } },
      { toolCall: { name: 'add', input: { a: 'one' } } },
      { toolCall: { name: 'add', input: {} }, rawToolInput: '{"a": 1,' },
      { toolCall: { name: 'add', input: { a: 1, b: 2 } } },
      { text: 'All done.' },
    ];
    const h = makeHarness(mode, storeKind, {
      brain: (r) => {
        const l = last(r).content[0];
        if (l?.type === 'tool_result') seen.push(l.content.map((c) => (c.type === 'text' ? c.text : '')).join(''));
        return script.shift()!;
      },
      tools: [add],
    });
    await h.send(userText('t1', 'compute', 'u1'));
    await h.settle();
    expect(seen).toHaveLength(5);
    expect(seen[0]).toMatch(/tool 'no_such_tool' does not exist/);
    expect(seen[1]).toMatch(/cannot directly invoke receive_event__injected/);
    expect(seen[2]).toMatch(/invalid arguments for add/);
    expect(seen[3]).toMatch(/not valid JSON/);
    expect(seen[4]).toBe('3');
    const t = await h.store.loadThread('t1');
    expect(t!.history.at(-1)!.content).toEqual([{ type: 'text', text: 'All done.' }]);
    await h.close();
  });

  it('discards a partial turn and retries on transient errors', async () => {
    const replies: ScriptedReply[] = [
      { error: new ModelError('overloaded', 'Overloaded') },
      { text: 'partial text that must vanish', cutAfterChunks: 2 },
      { error: new ModelError('rate_limit', 'Slow down', { retryAfterMs: 1 }) },
      { text: 'Complete answer.' },
    ];
    const h = makeHarness(mode, storeKind, { brain: () => replies.shift()! });
    await h.send(userText('t1', 'hi', 'u1'));
    await h.settle();
    const t = await h.store.loadThread('t1');
    expect(shape(t!.history)).toEqual(['user:text', 'assistant:text']);
    expect(t!.history[1].content).toEqual([{ type: 'text', text: 'Complete answer.' }]);
    const retries = h.events.filter((e) => e.type === 'completion-retry').map((e) => e.type === 'completion-retry' && e.kind);
    expect(retries).toEqual(['overloaded', 'stream_cut', 'rate_limit']);
    await h.close();
  });

  it('stops on a non-retryable error with a clear error event, keeping the input', async () => {
    let calls = 0;
    const h = makeHarness(mode, storeKind, {
      brain: () => {
        calls++;
        return { error: new ModelError('auth', 'The API key was rejected; check ANTHROPIC_API_KEY.') };
      },
    });
    await h.send(userText('t1', 'hi', 'u1'));
    await h.settle();
    expect(calls).toBe(1);
    const err = h.events.find((e) => e.type === 'error');
    expect(err).toMatchObject({ kind: 'auth', message: expect.stringContaining('ANTHROPIC_API_KEY') });
    const t = await h.store.loadThread('t1');
    expect(shape(t!.history)).toEqual(['user:text']);
    await h.close();
  });

  it('bounds loops of synchronous calls within one slice', async () => {
    const h = makeHarness(mode, storeKind, {
      brain: () => ({ toolCall: { name: 'missing', input: {} } }),
      system: { limits: { maxCompletionsPerSlice: 4 } },
    });
    await h.send(userText('t1', 'loop', 'u1'));
    await h.settle();
    const t = await h.store.loadThread('t1');
    expect(t!.record.completions).toBe(4);
    expect(h.events.some((e) => e.type === 'error' && e.kind === 'budget')).toBe(true);
    await h.close();
  });

  it('runs different threads independently', async () => {
    const tool = echoTool();
    const h = makeHarness(mode, storeKind, { brain: echoBrain, tools: [tool] });
    await h.send(userText('a', 'go', 'ua'), userText('b', 'go', 'ub'), userText('c', 'go', 'uc'));
    await h.settle();
    for (const id of ['a', 'b', 'c']) {
      const t = await h.store.loadThread(id);
      expect(shape(t!.history)).toHaveLength(4);
    }
    expect(tool.log).toHaveLength(3);
    await h.close();
  });
});

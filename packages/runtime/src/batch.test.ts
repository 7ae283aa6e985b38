// Several tool calls in one reply, as current models make them: every call runs, the results go
// back together in call order, and what arrives meanwhile waits its turn. Both modes, both stores.
import { describe, expect, it } from 'vitest';
import { toRequestMessages } from './history.js';
import { userText } from './input.js';
import type { HistoryMessage, ToolResultBlock } from './messages.js';
import type { CompletionRequest } from './provider.js';
import type { ScriptedReply } from './scripted-provider.js';
import { heldTool, watchTool } from './test-support/tools.js';
import { lastText, makeHarness, threadOf, toolUses, type Mode, type StoreKind } from './test-support/harness.js';
import type { AsyncTool } from './tool.js';
import { validateMessagesRequest } from './testing/index.js';

const MODES: Array<[Mode, StoreKind]> = [
  ['local', 'memory'],
  ['local', 'sqlite'],
  ['step', 'memory'],
  ['step', 'sqlite'],
];

/** The Messages API's own check of what the model was sent (a bad history is a 400 there). */
function valid(r: CompletionRequest): string | undefined {
  return validateMessagesRequest({
    model: r.model,
    max_tokens: r.maxTokens,
    system: r.system,
    messages: [...r.messages],
    tools: [...r.tools],
  });
}

function results(m: HistoryMessage | undefined): ToolResultBlock[] {
  return (m?.content ?? []).filter((b): b is ToolResultBlock => b.type === 'tool_result');
}

function resultText(b: ToolResultBlock): string {
  return b.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
}

/** Answers its calls in the reverse order of their dispatch, once all `expected` are in. */
function reverseTool(expected: number): AsyncTool & { dispatched: string[] } {
  const waiting: Array<() => void> = [];
  const dispatched: string[] = [];
  return {
    kind: 'async',
    name: 'fetch',
    description: 'Fetch a thing.',
    input_schema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
    dispatched,
    dispatch(input, ctx) {
      dispatched.push(ctx.call.id);
      waiting.push(() => void ctx.respond({ content: `thing ${String(input.n)}` }));
      if (waiting.length === expected) for (const answer of waiting.splice(0).reverse()) answer();
    },
  };
}

describe.each(MODES)('tool call batches in %s mode with the %s store', (mode, storeKind) => {
  it('runs all 5 async calls of a reply, and the next request carries the 5 results in call order', async () => {
    const tool = reverseTool(5);
    const requests: CompletionRequest[] = [];
    const brain = (r: CompletionRequest): ScriptedReply => {
      requests.push(r);
      if (toolUses(r.messages).length === 0) {
        return {
          text: 'Fetching five things at once.',
          toolCalls: [1, 2, 3, 4, 5].map((n) => ({ id: `call_${n}`, name: 'fetch', input: { n } })),
          textAfter: 'Back when they are in.',
        };
      }
      return { text: 'All five fetched.' };
    };
    const h = makeHarness(mode, storeKind, { brain, tools: [tool] });
    await h.send(userText('t1', 'go', 'u1'));
    await h.settle();

    expect(tool.dispatched).toEqual(['call_1', 'call_2', 'call_3', 'call_4', 'call_5']);
    expect(requests).toHaveLength(2);
    const [, second] = requests;
    const reply = second.messages.at(-2)!;
    expect(reply.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use', 'tool_use', 'tool_use', 'tool_use', 'text']);
    const last = second.messages.at(-1)!;
    expect(last.role).toBe('user');
    expect(results(last).map((b) => b.tool_use_id)).toEqual(['call_1', 'call_2', 'call_3', 'call_4', 'call_5']);
    expect(results(last).map(resultText)).toEqual(['thing 1', 'thing 2', 'thing 3', 'thing 4', 'thing 5']);
    for (const r of requests) expect(valid(r)).toBeUndefined();
    await h.close();
  });

  it('mixes synchronous and asynchronous calls: inline ones at once, spawn only after the async ones answered', async () => {
    const hold = heldTool();
    const requests: CompletionRequest[] = [];
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length > 1) return { toolCall: { name: 'close_thread', input: { thread_id: me.id } } };
      requests.push(r);
      if (toolUses(r.messages).length === 0) {
        return {
          toolCalls: [
            { id: 'c_hold', name: 'hold', input: {} },
            { id: 'c_bad', name: 'send_message_to_child', input: { thread_id: 'nobody', message: 'hi' } },
            { id: 'c_spawn', name: 'spawn_thread', input: { instructions: 'close at once', child_of: me.stack } },
            { id: 'c_unknown', name: 'no_such_tool', input: {} },
          ],
        };
      }
      return { text: 'done' };
    };
    const h = makeHarness(mode, storeKind, { brain, tools: [hold] });
    await h.send(userText('root', 'go', 'u1'));
    await h.settleUntil((e) => e.type === 'tool-dispatched' && e.callId === 'c_hold');
    // The inline calls ran (and failed), the spawn waits for the held call.
    const answered = h.events.flatMap((e) => (e.type === 'tool-result' ? [e.toolUseId] : []));
    expect(answered).toEqual(expect.arrayContaining(['c_bad', 'c_unknown']));
    expect(answered).not.toContain('c_spawn');
    expect(h.events.some((e) => e.type === 'thread-spawned')).toBe(false);
    expect(requests).toHaveLength(1);

    await hold.held.get('c_hold')!('held thing');
    await h.settle();
    const spawnedAt = h.events.findIndex((e) => e.type === 'thread-spawned');
    const heldAt = h.events.findIndex((e) => e.type === 'tool-result' && e.toolUseId === 'c_hold');
    expect(heldAt).toBeGreaterThan(-1);
    expect(spawnedAt).toBeGreaterThan(heldAt);
    const second = requests[1];
    const batch = results(second.messages.at(-1));
    expect(batch.map((b) => b.tool_use_id)).toEqual(['c_hold', 'c_bad', 'c_spawn', 'c_unknown']);
    expect(batch.map((b) => b.is_error === true)).toEqual([false, true, false, true]);
    expect(resultText(batch[2])).toMatch(/^Spawned thread /);
    for (const r of requests) expect(valid(r)).toBeUndefined();
    await h.close();
  });

  it('user text interrupts every unanswered call of a half-answered batch, keeping the answers already in', async () => {
    const hold = heldTool();
    const requests: CompletionRequest[] = [];
    const brain = (r: CompletionRequest): ScriptedReply => {
      requests.push(r);
      if (lastText(r) === 'go') return { toolCalls: ['a', 'b', 'c'].map((x) => ({ id: `c_${x}`, name: 'hold', input: {} })) };
      return { text: 'understood' };
    };
    const h = makeHarness(mode, storeKind, { brain, tools: [hold] });
    await h.send(userText('t1', 'go', 'u1'));
    await h.settleUntil((e) => e.type === 'tool-dispatched' && e.callId === 'c_c');
    await hold.held.get('c_b')!('b is in');
    await h.settleUntil((e) => e.type === 'tool-result' && e.toolUseId === 'c_b');
    expect(requests).toHaveLength(1);
    await h.send(userText('t1', 'stop, do something else', 'u2'));
    await h.settleUntil((e) => e.type === 'slice-finished' && e.outcome === 'completed');

    expect(requests).toHaveLength(2);
    const last = requests[1].messages.at(-1)!;
    expect(last.content.map((b) => (b.type === 'tool_result' ? `${b.tool_use_id}:${b.is_error === true}` : b.type))).toEqual([
      'c_a:true',
      'c_b:false',
      'c_c:true',
      'text',
    ]);
    expect(resultText(results(last)[1])).toBe('b is in');
    expect(hold.cancelled.map((c) => c.call.id).sort()).toEqual(['c_a', 'c_c']);
    // Late answers of the interrupted calls are stale: no third request.
    await hold.held.get('c_a')!('too late');
    await h.settleSlices();
    expect(requests).toHaveLength(2);
    for (const r of requests) expect(valid(r)).toBeUndefined();
    await h.close();
  });

  it('an event arriving mid-batch waits, and is injected after the batch results', async () => {
    const hold = heldTool();
    const watch = watchTool();
    const requests: CompletionRequest[] = [];
    const brain = (r: CompletionRequest): ScriptedReply => {
      requests.push(r);
      const calls = toolUses(r.messages).length;
      if (calls === 0) return { toolCall: { id: 'c_watch', name: 'watch', input: { what: 'logs' } } };
      if (calls === 1) return { toolCalls: [{ id: 'c_1', name: 'hold', input: {} }, { id: 'c_2', name: 'hold', input: {} }] };
      return { text: `seen: ${lastText(r)}` };
    };
    const h = makeHarness(mode, storeKind, { brain, tools: [hold, watch] });
    await h.send(userText('t1', 'go', 'u1'));
    await h.settleUntil((e) => e.type === 'tool-dispatched' && e.callId === 'c_2');
    await hold.held.get('c_1')!('one');
    await h.settleUntil((e) => e.type === 'tool-result' && e.toolUseId === 'c_1');
    await watch.ctxs.get('c_watch')!.emit({ content: 'log line', associative: true });
    await h.settleUntil((e) => e.type === 'input-deferred');
    expect(requests).toHaveLength(2);
    await hold.held.get('c_2')!('two');
    await h.settleUntil((e) => e.type === 'event-injected');

    const third = requests[2];
    const tail = third.messages.slice(-3);
    expect(results(tail[0]).map((b) => b.tool_use_id)).toEqual(['c_1', 'c_2']);
    expect(tail[1].content[0]).toMatchObject({ type: 'tool_use', name: 'receive_event__injected', input: { original_tool_call_id: 'c_watch' } });
    expect(resultText(results(tail[2])[0])).toBe('log line');
    for (const r of requests) expect(valid(r)).toBeUndefined();
    await h.close();
  });

  it('runs at most maxCallsPerReply calls of one reply; the others are answered with an error asking to split them', async () => {
    const tool = reverseTool(3);
    const requests: CompletionRequest[] = [];
    const brain = (r: CompletionRequest): ScriptedReply => {
      requests.push(r);
      if (toolUses(r.messages).length === 0) {
        return { toolCalls: [1, 2, 3, 4, 5].map((n) => ({ id: `call_${n}`, name: 'fetch', input: { n } })) };
      }
      return { text: 'ok' };
    };
    const h = makeHarness(mode, storeKind, { brain, tools: [tool], system: { limits: { maxCallsPerReply: 3 } } });
    await h.send(userText('t1', 'go', 'u1'));
    await h.settle();
    expect(tool.dispatched).toEqual(['call_1', 'call_2', 'call_3']);
    const batch = results(requests[1].messages.at(-1));
    expect(batch.map((b) => b.is_error === true)).toEqual([false, false, false, true, true]);
    expect(resultText(batch[3])).toMatch(/made 5 tool calls, and at most 3 run per reply.*next reply/);
    for (const r of requests) expect(valid(r)).toBeUndefined();
    await h.close();
  });

  it('report_to_parent and close_thread sharing a reply run after its async calls; a spawn after the close does not run', async () => {
    const hold = heldTool();
    let childId = '';
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length === 1) {
        return toolUses(r.messages).length === 0
          ? { toolCall: { name: 'spawn_thread', input: { instructions: 'edit then report', child_of: me.stack } } }
          : { text: 'noted' };
      }
      childId = me.id;
      return {
        toolCalls: [
          { id: 'c_edit', name: 'hold', input: {} },
          { id: 'c_report', name: 'report_to_parent', input: { report: 'edited' } },
          { id: 'c_close', name: 'close_thread', input: { thread_id: me.id } },
          { id: 'c_after', name: 'spawn_thread', input: { instructions: 'never', child_of: me.stack } },
        ],
      };
    };
    const h = makeHarness(mode, storeKind, { brain, tools: [hold] });
    await h.send(userText('root', 'go', 'u1'));
    await h.settleUntil((e) => e.type === 'tool-dispatched' && e.callId === 'c_edit');
    // The edit runs: no report yet, the child is open.
    expect(h.events.some((e) => e.type === 'tool-result' && e.toolUseId === 'c_report')).toBe(false);
    expect(h.events.some((e) => e.type === 'thread-closed')).toBe(false);
    await hold.held.get('c_edit')!('edit done');
    await h.settle();

    const at = (pred: (e: (typeof h.events)[number]) => boolean) => h.events.findIndex(pred);
    const edited = at((e) => e.type === 'tool-result' && e.toolUseId === 'c_edit');
    const reported = at((e) => e.type === 'tool-result' && e.toolUseId === 'c_report');
    const closed = at((e) => e.type === 'thread-closed' && e.threadId === childId);
    expect(edited).toBeGreaterThan(-1);
    expect(reported).toBeGreaterThan(edited);
    expect(closed).toBeGreaterThan(reported);
    const after = h.events.find((e) => e.type === 'tool-result' && e.toolUseId === 'c_after');
    expect(after).toMatchObject({ isError: true });
    expect(after?.type === 'tool-result' && resultText({ type: 'tool_result', tool_use_id: 'c_after', content: after.content })).toMatch(/not run: an earlier call of this reply closed the thread/);
    expect(h.events.filter((e) => e.type === 'thread-spawned')).toHaveLength(1);
    // The parent got the report, then the close notice.
    const root = (await h.store.loadThread('root'))!;
    const text = JSON.stringify(root.history);
    expect(text).toContain('Report from child thread: edited');
    expect(text).toContain('has shut down');
    await h.close();
  });

  it('three spawn_thread calls in one reply start three children at once, each with a valid history that names itself last', async () => {
    const requests: CompletionRequest[] = [];
    const firstOf = new Map<string, CompletionRequest>();
    let arrived = 0;
    let release!: () => void;
    const allThree = new Promise<void>((resolve) => (release = resolve));
    const brain = async (r: CompletionRequest): Promise<ScriptedReply> => {
      requests.push(r);
      const me = threadOf(r);
      if (me.stack.length === 1) {
        if (toolUses(r.messages).length === 0) {
          return {
            text: 'Splitting the work three ways.',
            toolCalls: ['red', 'green', 'blue'].map((c) => ({ id: `spawn_${c}`, name: 'spawn_thread', input: { instructions: `paint it ${c}`, child_of: me.stack } })),
          };
        }
        return { text: 'root carries on' };
      }
      if (!firstOf.has(me.id)) {
        firstOf.set(me.id, r);
        // Each child's first completion waits for the other two: only concurrent children get past.
        if (++arrived === 3) release();
        await allThree;
        return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: lastText(r).slice(0, 20) } } };
      }
      return { text: 'idle' };
    };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('root', 'paint', 'u1'));
    await h.settle();

    expect(firstOf.size).toBe(3);
    // Every child's first completion started before any child's first completion finished.
    const started = h.events.flatMap((e, i) => (e.type === 'completion-started' && e.threadId !== 'root' ? [i] : []));
    const finished = h.events.flatMap((e, i) => (e.type === 'slice-finished' && e.threadId !== 'root' && e.completions > 0 ? [i] : []));
    expect(Math.max(...started.slice(0, 3))).toBeLessThan(Math.min(...finished));
    for (const [id, first] of firstOf) {
      expect(valid(first)).toBeUndefined();
      expect(threadOf(first).stack).toEqual(['root', id]);
      const own = results(first.messages.at(-1));
      expect(own.map((b) => b.tool_use_id)).toEqual(['spawn_red', 'spawn_green', 'spawn_blue']);
      const mine = own.find((b) => resultText(b).includes(`Your thread ID is ${id}`))!;
      expect(resultText(mine)).toMatch(/paint it (red|green|blue)/);
      for (const sibling of own.filter((b) => b !== mine)) expect(resultText(sibling)).toMatch(/started thread th_\S+, a sibling/);
      // The parent's history up to and including the spawning reply, byte for byte.
      expect(JSON.stringify(first.messages[0])).toBe(JSON.stringify(requests[0].messages[0]));
      expect(first.messages[1].content.map((c) => c.type)).toEqual(['text', 'tool_use', 'tool_use', 'tool_use']);
      expect(first.system).toBe(requests[0].system);
      expect(JSON.stringify(first.tools)).toBe(JSON.stringify(requests[0].tools));
    }
    for (const r of requests) expect(valid(r)).toBeUndefined();
    await h.close();
  });
});

describe('the results of a batch, as stored', () => {
  it('form one user message in call order, so the stored history is sent as is', async () => {
    const tool = reverseTool(3);
    const h = makeHarness('local', 'sqlite', {
      brain: (r) => (toolUses(r.messages).length === 0 ? { toolCalls: [1, 2, 3].map((n) => ({ id: `k${n}`, name: 'fetch', input: { n } })) } : { text: 'ok' }),
      tools: [tool],
    });
    await h.send(userText('t1', 'go', 'u1'));
    await h.settle();
    const t = (await h.store.loadThread('t1'))!;
    expect(toRequestMessages(t.history)).toBe(t.history);
    expect(results(t.history[2]).map((b) => b.tool_use_id)).toEqual(['k1', 'k2', 'k3']);
    expect(t.record.batch).toEqual([]);
    await h.close();
  });
});

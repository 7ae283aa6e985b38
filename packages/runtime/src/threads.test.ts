import { describe, expect, it } from 'vitest';
import { userText } from './input.js';
import type { CompletionRequest } from './provider.js';
import type { ScriptedReply } from './scripted-provider.js';
import { lastText, makeHarness, threadOf, toolUses, type Mode, type StoreKind } from './test-support/harness.js';

const combos: Array<[Mode, StoreKind]> = [
  ['local', 'memory'],
  ['local', 'sqlite'],
  ['step', 'memory'],
  ['step', 'sqlite'],
];

describe.each(combos)('threads in %s mode with the %s store', (mode, storeKind) => {
  it('runs 3 children concurrently; the parent gets exactly their 3 reports, in arrival order, on their own spawn calls', async () => {
    const started = new Set<string>();
    let releaseAll!: () => void;
    const allStarted = new Promise<void>((r) => (releaseAll = r));
    const brain = async (r: CompletionRequest): Promise<ScriptedReply> => {
      const me = threadOf(r);
      if (me.stack.length === 1) {
        const spawned = toolUses(r.messages).filter((u) => u.name === 'spawn_thread').length;
        if (spawned < 3 && lastText(r) !== '' && !lastText(r).includes('Report from')) {
          return {
            text: `Spawning worker ${spawned + 1}.`,
            toolCall: { name: 'spawn_thread', input: { instructions: `task ${spawned + 1}`, child_of: me.stack } },
          };
        }
        return { text: 'Waiting for my children.' };
      }
      // A child: wait until all three are running (a barrier), then close with a report.
      started.add(me.id);
      if (started.size === 3) releaseAll();
      await Promise.race([allStarted, new Promise((res) => setTimeout(res, 3_000))]);
      const task = /task (\d)/.exec(lastText(r))?.[1];
      return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: `finished task ${task}` } } };
    };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('root', 'Split the work in three.', 'u1'));
    await h.settle();

    // Concurrency: every child started a completion before any child finished.
    const firstClose = h.events.findIndex((e) => e.type === 'thread-closed');
    const childStarts = new Set(
      h.events.slice(0, firstClose).flatMap((e) => (e.type === 'completion-started' && e.threadId !== 'root' ? [e.threadId] : [])),
    );
    expect(childStarts.size).toBe(3);
    const closedOrder = h.events.flatMap((e) => (e.type === 'thread-closed' ? [e.threadId] : []));
    expect(closedOrder).toHaveLength(3);

    const root = await h.store.loadThread('root');
    const uses = toolUses(root!.history);
    const spawnCalls = uses.filter((u) => u.name === 'spawn_thread');
    expect(spawnCalls).toHaveLength(3);
    const spawned = h.events.flatMap((e) => (e.type === 'thread-spawned' ? [[e.spawnCallId, e.childId] as const] : []));
    const childOfCall = new Map(spawned);
    const injected = uses.filter((u) => u.name === 'receive_event__injected');
    expect(injected).toHaveLength(3);
    const reportedBy = injected.map((u) => {
      const callId = u.input.original_tool_call_id as string;
      expect(u.input.original_tool_name).toBe('spawn_thread');
      expect(spawnCalls.map((c) => c.id)).toContain(callId);
      return childOfCall.get(callId);
    });
    expect(reportedBy).toEqual(closedOrder);
    // Each report's text follows its own injected call.
    for (const u of injected) {
      const idx = root!.history.findIndex((m) => m.content.some((b) => b.type === 'tool_result' && b.tool_use_id === u.id));
      const task = spawnCalls.findIndex((c) => c.id === u.input.original_tool_call_id) + 1;
      expect(JSON.stringify(root!.history[idx])).toContain(`finished task ${task}`);
    }
    await h.close();
  });

  it('refuses a spawn whose child_of is not the caller\'s own stack', async () => {
    const replies: ScriptedReply[] = [
      { toolCall: { name: 'spawn_thread', input: { instructions: 'x', child_of: ['someone-else'] } } },
      { text: 'Understood.' },
    ];
    const h = makeHarness(mode, storeKind, { brain: () => replies.shift()! });
    await h.send(userText('root', 'go', 'u1'));
    await h.settle();
    const root = await h.store.loadThread('root');
    expect(JSON.stringify(root!.history)).toContain('Do NOT spawn the threads your parent planned');
    expect(h.events.some((e) => e.type === 'thread-spawned')).toBe(false);
    await h.close();
  });

  it('offers every thread the same tools and system prompt byte for byte, answers a root\'s report_to_parent with an error, and the child inherits history up to the spawn call', async () => {
    const offered = new Map<string, string>();
    let childSaw: string[] = [];
    let rootReport = '';
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      offered.set(me.stack.length === 1 ? 'root' : 'child', JSON.stringify([r.system, r.tools]));
      if (me.stack.length === 1) {
        const calls = toolUses(r.messages);
        if (calls.length === 0) return { toolCall: { name: 'report_to_parent', input: { report: 'hi' } } };
        if (calls.length === 1) {
          rootReport = lastText(r);
          return { text: 'Delegating.', toolCall: { name: 'spawn_thread', input: { instructions: 'say hi', child_of: me.stack } } };
        }
        return { text: 'ok' };
      }
      childSaw = r.messages.map((m) => `${m.role}:${m.content.map((c) => c.type).join('+')}`);
      return { toolCall: { name: 'close_thread', input: { thread_id: me.id } } };
    };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('root', 'go', 'u1'));
    await h.settle();
    expect(offered.get('child')).toBe(offered.get('root'));
    expect(offered.get('root')).toContain('report_to_parent');
    expect(rootReport).toMatch(/root thread, which has no parent/);
    expect(childSaw).toEqual(['user:text', 'assistant:tool_use', 'user:tool_result', 'assistant:text+tool_use', 'user:tool_result']);
    const root = await h.store.loadThread('root');
    expect(JSON.stringify(root!.history)).toContain('has shut down');
    await h.close();
  });

  it('delivers a parent message to a direct child only, on the child\'s spawn call', async () => {
    let childId = '';
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      const text = lastText(r);
      if (me.stack.length === 1) {
        if (text === 'go') return { toolCall: { name: 'spawn_thread', input: { instructions: 'wait for word', child_of: me.stack } } };
        if (text.startsWith('Spawned thread')) {
          childId = /Spawned thread (\S+)\./.exec(text)![1]!;
          return { toolCall: { name: 'send_message_to_child', input: { thread_id: childId, message: 'the word is apple' } } };
        }
        if (text === 'Message sent to child thread.') {
          return { toolCall: { name: 'send_message_to_child', input: { thread_id: 'not-my-child', message: 'hi' } } };
        }
        return { text: 'done' };
      }
      if (text.includes('Message from parent thread')) {
        return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: text.includes('apple') ? 'got apple' : 'no word' } } };
      }
      return { text: 'Waiting.' };
    };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('root', 'go', 'u1'));
    await h.settle();
    const child = await h.store.loadThread(childId);
    const inj = toolUses(child!.history).find((u) => u.name === 'receive_event__injected');
    expect(inj?.input.original_tool_name).toBe('spawn_thread');
    expect(inj?.input.original_tool_call_id).toBe(child!.record.spawnCallId);
    const root = await h.store.loadThread('root');
    const all = JSON.stringify(root!.history);
    expect(all).toContain('is not a child of the current thread root');
    expect(all).toContain('got apple');
    await h.close();
  });

  it('enforces the live-thread budget with a clear error', async () => {
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length > 1) return { text: 'child idle' };
      const n = toolUses(r.messages).length;
      return n < 3 ? { toolCall: { name: 'spawn_thread', input: { instructions: `t${n}`, child_of: me.stack } } } : { text: 'stop' };
    };
    const h = makeHarness(mode, storeKind, { brain, system: { limits: { maxLiveThreads: 2 } } });
    await h.send(userText('root', 'go', 'u1'));
    await h.settle();
    expect(h.events.filter((e) => e.type === 'thread-spawned')).toHaveLength(1);
    const root = await h.store.loadThread('root');
    expect(JSON.stringify(root!.history)).toContain('threads are already running (the limit is 2)');
    await h.close();
  });

  it('lets a root fan out more children in one slice than the correction bound, which still stops failing loops', async () => {
    // Five successful spawns in a row, then calls that keep failing: the bound of 3 counts only
    // the failures, so every child is spawned and the loop of failures is still cut off.
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length > 1) return { text: 'child idle' };
      const n = toolUses(r.messages).length;
      return n < 5
        ? { toolCall: { name: 'spawn_thread', input: { instructions: `t${n}`, child_of: me.stack } } }
        : { toolCall: { name: 'no_such_tool', input: {} } };
    };
    const h = makeHarness(mode, storeKind, { brain, system: { limits: { maxCompletionsPerSlice: 3 } } });
    await h.send(userText('root', 'go', 'u1'));
    await h.settle();
    expect(h.events.filter((e) => e.type === 'thread-spawned')).toHaveLength(5);
    const root = await h.store.loadThread('root');
    expect(root!.record.completions).toBe(5 + 3);
    const budget = h.events.filter((e) => e.type === 'error' && e.kind === 'budget');
    expect(budget).toEqual([expect.objectContaining({ threadId: 'root', message: expect.stringMatching(/3 model calls in a row whose tool calls failed/) })]);
    await h.close();
  });

  it('carries a structured attachment with a child\'s report to observers, not to the model', async () => {
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length === 1) {
        return lastText(r) === 'go'
          ? { toolCall: { name: 'spawn_thread', input: { instructions: 'edit', child_of: me.stack } } }
          : { text: 'ok' };
      }
      return lastText(r).startsWith('Report sent')
        ? { text: 'done' }
        : { toolCall: { name: 'report_to_parent', input: { report: 'edited a.ts' } } };
    };
    const h = makeHarness(mode, storeKind, {
      brain,
      system: {
        reviewReport: async (t, report) => ({ attachment: { diff: `patch from ${t.id}` }, note: `The human accepted: ${report}` }),
      },
    });
    await h.send(userText('root', 'go', 'u1'));
    await h.settle();
    const report = h.events.find((e) => e.type === 'event-injected' && e.source === 'report');
    expect(report).toMatchObject({ threadId: 'root', attachment: { diff: expect.stringMatching(/^patch from th_/) } });
    const root = await h.store.loadThread('root');
    expect(JSON.stringify(root!.history)).toContain('edited a.ts');
    expect(JSON.stringify(root!.history)).not.toContain('patch from');
    expect(JSON.stringify(root!.history)).toContain('The human accepted: edited a.ts');
    await h.close();
  });

  it('stops a thread at its completion budget', async () => {
    const h = makeHarness(mode, storeKind, { brain: () => ({ text: 'again' }), system: { limits: { maxCompletionsPerThread: 2 } } });
    for (let i = 0; i < 3; i++) {
      await h.send(userText('root', `turn ${i}`, `u${i}`));
      await h.settle();
    }
    const root = await h.store.loadThread('root');
    expect(root!.record.completions).toBe(2);
    expect(h.events.some((e) => e.type === 'error' && e.kind === 'budget' && /budget of 2/.test(e.message))).toBe(true);
    await h.close();
  });
});

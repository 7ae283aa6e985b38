import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from './events.js';
import { userText } from './input.js';
import { LocalSystem } from './local-system.js';
import type { CompletionRequest, ModelProvider } from './provider.js';
import { ScriptedProvider, type ScriptedReply } from './scripted-provider.js';
import { lastText, makeStore, threadOf, type StoreKind } from './test-support/harness.js';

/** Resolves at the first event matching `match` emitted from now on. */
function eventSeen(system: LocalSystem, match: (e: RuntimeEvent) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const off = system.subscribe((e) => {
      if (match(e)) {
        off();
        resolve();
      }
    });
  });
}

describe.each<StoreKind>(['memory', 'sqlite'])('reports of children finishing together (%s store)', (storeKind) => {
  // Two children close in the same moment; one review is slow (the diff of a big change). The
  // parent is woken by the fast child's report while the slow one is still under review.
  function setup(opts: { userTextMeanwhile?: boolean } = {}) {
    const { store, cleanup } = makeStore(storeKind);
    const rootRequests: string[] = [];
    const brain = async (r: CompletionRequest): Promise<ScriptedReply> => {
      const me = threadOf(r);
      if (me.stack.length > 1) {
        // The children finish once the root has gone idle after spawning them.
        await rootIdle;
        const own = JSON.stringify(r.messages.find((m) => JSON.stringify(m.content).includes(`Your thread ID is ${me.id}`)));
        const task = /task (fast|slow)/.exec(own)?.[1];
        return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: `finished the ${task} task` } } };
      }
      rootRequests.push(JSON.stringify(r.messages));
      if (lastText(r) === 'go') {
        return {
          toolCalls: ['fast', 'slow'].map((task) => ({
            id: `spawn_${task}`,
            name: 'spawn_thread',
            input: { instructions: `task ${task}`, child_of: me.stack },
          })),
        };
      }
      return { text: 'noted' };
    };
    const system: LocalSystem = new LocalSystem({
      store,
      provider: new ScriptedProvider(brain),
      model: 'scripted-model',
      reviewReport: async (_child, report) => {
        if (report.includes('fast')) return {};
        // The slow review ends only once the fast child's report has reached the parent (its
        // close event follows the delivery), and, in the user-text case, once the user spoke.
        await fastClosed;
        if (opts.userTextMeanwhile) {
          const spoke = eventSeen(system, (e) => e.type === 'completion-started' && e.threadId === 'root');
          await system.send(userText('root', 'status?', 'u2'));
          await spoke;
        }
        return {};
      },
    });
    const rootIdle = eventSeen(system, (e) => e.type === 'slice-finished' && e.threadId === 'root');
    // The slow child cannot close before its review ends: the first close is the fast child's.
    const fastClosed = eventSeen(system, (e) => e.type === 'thread-closed');
    return { system, rootRequests, cleanup };
  }

  it('the parent reads both reports in one completion instead of one completion each', async () => {
    const { system, rootRequests, cleanup } = setup();
    await system.sendUserText('root', 'go', 'u1');
    await system.whenIdle();
    const first = rootRequests.find((m) => m.includes('finished the'));
    expect(first).toContain('finished the fast task');
    expect(first).toContain('finished the slow task');
    // go, the spawn results, the two reports together.
    expect(rootRequests).toHaveLength(3);
    await system.close();
    cleanup();
  });

  it('user text does not wait for reports still under review', async () => {
    const { system, rootRequests, cleanup } = setup({ userTextMeanwhile: true });
    await system.sendUserText('root', 'go', 'u1');
    await system.whenIdle();
    // The user's question was answered while the slow review still ran, with the fast report.
    const status = rootRequests.find((m) => m.includes('status?'));
    expect(status).toContain('finished the fast task');
    expect(status).not.toContain('finished the slow task');
    expect(rootRequests.at(-1)).toContain('finished the slow task');
    expect(rootRequests).toHaveLength(4);
    await system.close();
    cleanup();
  });

  it('a parent woken by one report waits for a sibling whose model is still writing its report', async () => {
    const { store, cleanup } = makeStore(storeKind);
    const rootRequests: string[] = [];
    const taskOf = (r: CompletionRequest): string | undefined => {
      const me = threadOf(r);
      if (me.stack.length < 2) return undefined;
      const own = JSON.stringify(r.messages.find((m) => JSON.stringify(m.content).includes(`Your thread ID is ${me.id}`)));
      return /task (fast|slow)/.exec(own)?.[1];
    };
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      const task = taskOf(r);
      if (task !== undefined) {
        return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: `finished the ${task} task` } } };
      }
      rootRequests.push(JSON.stringify(r.messages));
      if (lastText(r) === 'go') {
        return { toolCalls: ['fast', 'slow'].map((task) => ({ id: `spawn_${task}`, name: 'spawn_thread', input: { instructions: `task ${task}`, child_of: me.stack } })) };
      }
      return { text: 'noted' };
    };
    const scripted = new ScriptedProvider(brain);
    // The slow child's model has begun its close_thread call and writes the rest of it only once
    // the fast child's report has reached the parent (its close follows the delivery).
    const provider: ModelProvider = {
      name: 'held',
      async *stream(request, signal) {
        const slow = taskOf(request) === 'slow';
        for await (const ev of scripted.stream(request, signal)) {
          yield ev;
          if (slow && ev.type === 'tool_use_start') await fastClosed;
        }
      },
    };
    const system: LocalSystem = new LocalSystem({ store, provider, model: 'scripted-model' });
    const fastClosed = eventSeen(system, (e) => e.type === 'thread-closed');
    await system.sendUserText('root', 'go', 'u1');
    await system.whenIdle();
    const first = rootRequests.find((m) => m.includes('finished the'));
    expect(first).toContain('finished the fast task');
    expect(first).toContain('finished the slow task');
    expect(rootRequests).toHaveLength(3);
    await system.close();
    cleanup();
  });
});

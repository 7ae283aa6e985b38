// A synchronous call committed but cut short by a crash is re-run on the next start; only a call
// that ends the turn (close_thread) ends it then, any other lets the thread go on.
import { describe, expect, it } from 'vitest';
import { LocalSystem } from './local-system.js';
import { MemoryStore } from './memory-store.js';
import type { CompletionRequest } from './provider.js';
import { ScriptedProvider, type ScriptedReply } from './scripted-provider.js';
import { ZERO_USAGE } from './messages.js';
import { threadOf } from './test-support/harness.js';

async function crashedMidCall(store: MemoryStore, call: { id: string; name: string; input: Record<string, unknown> }) {
  await store.ensureRootThread('root');
  // What a crash right after runSync's commit leaves: the turn holding the call, not executed.
  await store.commit({
    threadId: 'root',
    append: [
      { role: 'user', content: [{ type: 'text', text: 'fan out' }] },
      { role: 'assistant', content: [{ type: 'tool_use', ...call }] },
    ],
    consumed: [],
    batch: [{ ...call, dispatched: false }],
    subscriptions: [],
    hasDeferred: false,
    compacting: false,
    enqueue: [],
    completions: 1,
    usage: ZERO_USAGE,
    contextTokens: 0,
  });
}

describe('a synchronous call re-run after a crash', () => {
  it('spawn_thread runs once more and the thread goes on to its next completion', async () => {
    const store = new MemoryStore();
    await crashedMidCall(store, { id: 'call-1', name: 'spawn_thread', input: { instructions: 'child work', child_of: ['root'] } });
    const seen: string[] = [];
    const brain = (r: CompletionRequest): ScriptedReply => {
      const isRoot = threadOf(r).stack.length === 1;
      if (isRoot) seen.push(JSON.stringify(r.messages.at(-1)));
      return { text: isRoot ? 'Child started; carrying on.' : 'child idle' };
    };
    const system = new LocalSystem({ store, provider: new ScriptedProvider(brain), model: 'm' });
    const spawned: string[] = [];
    system.subscribe((e) => {
      if (e.type === 'thread-spawned' && e.kind === 'child') spawned.push(e.childId);
    });
    await system.start();
    await system.whenIdle();
    const root = (await store.loadThread('root'))!;
    expect(spawned).toHaveLength(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toContain('Spawned thread');
    expect(root.history.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Child started; carrying on.' }] });
    expect(root.record.batch).toEqual([]);
    await system.close();
  });
});

// What a host (the CLI) asks the runtime instead of reading its store: a thread's record without
// its history, a thread's history and usage, and when the system has nothing left to do.
import Database from 'better-sqlite3';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeEvent } from './events.js';
import { LocalSystem } from './local-system.js';
import { MemoryStore } from './memory-store.js';
import type { CompletionRequest } from './provider.js';
import { ScriptedProvider, type Brain } from './scripted-provider.js';
import { SqliteStore } from './sqlite-store.js';
import type { RuntimeStore } from './store.js';
import { tempDir, threadOf } from './test-support/harness.js';
import { watchTool } from './test-support/tools.js';
import type { Tool } from './tool.js';

const FAST_RETRY = { baseDelayMs: 1, maxDelayMs: 5, initTimeoutMs: 5_000, stallTimeoutMs: 5_000 };
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function makeSystem(kind: 'memory' | 'sqlite', brain: Brain, tools: Tool[] = []): { system: LocalSystem; store: RuntimeStore; path?: string } {
  let store: RuntimeStore;
  let path: string | undefined;
  if (kind === 'memory') store = new MemoryStore();
  else {
    const dir = tempDir();
    path = join(dir, 'state.db');
    store = new SqliteStore({ path });
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  }
  const system = new LocalSystem({ store, provider: new ScriptedProvider(brain), tools, model: 'm', retry: FAST_RETRY });
  cleanups.push(() => system.close());
  return { system, store, ...(path ? { path } : {}) };
}

/**
 * Lets every promise that can settle without new I/O or timers settle: what a wrong answer from
 * whenQuiescent would need to show itself. Not a wait for time to pass.
 */
const drained = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The root spawns one child, which closes at once; the root then says it is done. */
const spawnBrain: Brain = (r: CompletionRequest) => {
  const me = threadOf(r);
  if (me.stack.length > 1) return { toolCall: { name: 'close_thread', input: { thread_id: me.id } } };
  const seen = JSON.stringify(r.messages);
  if (!seen.includes('spawn_thread')) return { toolCall: { name: 'spawn_thread', input: { instructions: 'Look around.', child_of: me.stack } } };
  return { text: 'Done.' };
};

describe.each(['memory', 'sqlite'] as const)('host queries with the %s store', (kind) => {
  it('threadRecord: where a thread hangs (parent, stack, kind, status), undefined for an unknown id', async () => {
    const { system } = makeSystem(kind, spawnBrain);
    const events: RuntimeEvent[] = [];
    system.subscribe((e) => events.push(e));
    await system.sendUserText('root', 'go');
    await system.whenIdle();
    const spawned = events.find((e): e is Extract<RuntimeEvent, { type: 'thread-spawned' }> => e.type === 'thread-spawned')!;
    const child = await system.threadRecord(spawned.childId);
    expect(child).toMatchObject({ id: spawned.childId, parentId: 'root', stack: ['root', spawned.childId], kind: 'child', status: 'closed' });
    expect(await system.threadRecord('root')).toMatchObject({ id: 'root', parentId: null, stack: ['root'], kind: 'root', status: 'open' });
    expect(await system.threadRecord('nobody')).toBeUndefined();
  });

  it('threadHistory and usageByThread: what the model saw and what it cost, without the store', async () => {
    const { system } = makeSystem(kind, () => ({ text: 'Hello.' }));
    await system.sendUserText('root', 'hi');
    await system.whenIdle();
    expect((await system.threadHistory('root')).map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(await system.threadHistory('nobody')).toEqual([]);
    expect((await system.usageByThread('root')).map((u) => [u.threadId, u.model, u.completions])).toEqual([['root', 'm', 1]]);
  });

  it("callDisplay: a call's line as its tool gives it, for a transcript rebuilt from history", () => {
    const { system } = makeSystem(kind, () => ({ text: 'Hello.' }));
    expect(system.callDisplay({ name: 'spawn_thread', input: { instructions: 'Fix the parser\nthen test', child_of: ['root'] } })).toBe(
      'Spawn thread: Fix the parser',
    );
    expect(system.callDisplay({ name: 'no_such_tool', input: {} })).toBeUndefined();
  });

  it('whenQuiescent: a finished turn is quiescent, also when asked while the slice still runs', async () => {
    const { system } = makeSystem(kind, () => ({ text: 'Hello.' }));
    const finished: string[] = [];
    system.subscribe((e) => e.type === 'slice-finished' && finished.push(e.threadId));
    await system.sendUserText('root', 'hi');
    expect(await system.whenQuiescent()).toEqual({ kind: 'quiescent' });
    expect(finished).toEqual(['root']);
  });

  it('whenQuiescent: an active subscription holds it open until its final event has been handled', async () => {
    const watch = watchTool();
    const brain: Brain = (r) => (r.messages.length === 1 ? { toolCall: { name: 'watch', input: {} } } : { text: `Seen ${r.messages.length}.` });
    const { system } = makeSystem(kind, brain, [watch]);
    const log: string[] = [];
    system.subscribe((e) => e.type === 'event-injected' && e.final && log.push('final event'));
    await system.sendUserText('root', 'watch it');
    const quiet = system.whenQuiescent().then((q) => (log.push('quiescent'), q));
    await system.whenIdle();
    await drained();
    expect(log).toEqual([]);
    const [ctx] = [...watch.ctxs.values()];
    await ctx.emit({ id: 'e1', content: 'the end', associative: true, final: true });
    expect(await quiet).toEqual({ kind: 'quiescent' });
    expect(log).toEqual(['final event', 'quiescent']);
  });

  it('whenQuiescent: a pending timer holds it open until the thread woke and finished', async () => {
    const requests: number[] = [];
    const brain: Brain = (r) => {
      requests.push(r.messages.length);
      return r.messages.length === 1 ? { toolCall: { name: 'sleep', input: { seconds: 0.2 } } } : { text: 'Awake.' };
    };
    const { system } = makeSystem(kind, brain);
    await system.sendUserText('root', 'nap');
    expect(await system.whenQuiescent()).toEqual({ kind: 'quiescent' });
    // The second completion ran after the wake-up: quiescence did not end at the nap.
    expect(requests).toEqual([1, 3]);
  });

  it('whenQuiescent: aborted by the signal, stalled (naming what waits) when the host says nothing can come', async () => {
    const watch = watchTool();
    const brain: Brain = (r) => (r.messages.length === 1 ? { toolCall: { name: 'watch', input: {} } } : { text: 'Waiting.' });
    const { system } = makeSystem(kind, brain, [watch]);
    await system.sendUserText('root', 'watch it');
    const stop = new AbortController();
    const aborted = system.whenQuiescent({ signal: stop.signal });
    let drain!: () => void;
    const stalled = system.whenQuiescent({ stalled: new Promise<void>((r) => (drain = r)) });
    await system.whenIdle();
    stop.abort();
    expect(await aborted).toEqual({ kind: 'aborted' });
    drain();
    const end = await stalled;
    expect(end.kind).toBe('stalled');
    expect(end.kind === 'stalled' && end.waiting.map((w) => [w.threadId, w.subscription.name])).toEqual([['root', 'watch']]);
  });
});

describe('threadRecord with the SQLite store', () => {
  it('reads no message: a thread whose stored messages are unreadable still has its record', async () => {
    const { system, path } = makeSystem('sqlite', spawnBrain);
    await system.sendUserText('root', 'go');
    await system.whenIdle();
    // Another connection spoils every stored message row: loading a history must now fail.
    const db = new Database(path);
    db.prepare("UPDATE messages SET data = 'not json'").run();
    db.close();
    const reader = new SqliteStore({ path: path! });
    cleanups.push(() => reader.close());
    await expect(reader.loadThread('root')).rejects.toThrow();
    expect(await reader.threadRecord('root')).toMatchObject({ id: 'root', parentId: null, kind: 'root' });
  });
});

// A process running some sessions of a shared store recovers, times and waits for only those:
// another session's interrupted call, queued input, timer or subscription is left for whoever
// runs that session next.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { userText } from './input.js';
import { LocalSystem } from './local-system.js';
import type { CompletionRequest } from './provider.js';
import { ScriptedProvider } from './scripted-provider.js';
import { SqliteStore } from './sqlite-store.js';
import type { RuntimeEvent } from './events.js';
import { lastText, tempDir, threadOf } from './test-support/harness.js';
import { heldTool, watchTool } from './test-support/tools.js';

const brain = (r: CompletionRequest) => {
  const id = threadOf(r).id;
  const last = lastText(r);
  if (id === 'a') return last.includes('go a') ? { text: 'holding', toolCall: { name: 'hold', input: {} } } : { text: `a heard: ${last}` };
  if (id === 't') return last.includes('go t') ? { text: 'sleeping', toolCall: { name: 'sleep', input: { seconds: 3600 } } } : { text: 't woke' };
  if (id === 'w') return last.includes('go w') ? { text: 'watching', toolCall: { name: 'watch', input: {} } } : { text: 'w saw' };
  return { text: `answer to ${last}` };
};

function system(db: string, roots: string[] | undefined, requests: string[], events: RuntimeEvent[]) {
  const s = new LocalSystem({
    store: new SqliteStore({ path: db }),
    provider: new ScriptedProvider((r) => {
      requests.push(threadOf(r).id);
      return brain(r);
    }),
    tools: [heldTool(), watchTool()],
    model: 'm',
    ...(roots ? { roots } : {}),
  });
  s.subscribe((e) => events.push(e));
  return s;
}

/** Leaves three sessions with work outstanding: a call that dies with the process, a timer, a subscription; and queued input. */
async function leaveWork(db: string): Promise<void> {
  const events: RuntimeEvent[] = [];
  const s = system(db, ['a', 't', 'w'], [], events);
  await s.start();
  const watching = new Promise<void>((resolve) => s.subscribe((e) => e.type === 'slice-finished' && e.threadId === 'w' && events.some((x) => x.type === 'tool-result' && x.threadId === 'w') && resolve()));
  await s.send([userText('a', 'go a', 'u-a'), userText('t', 'go t', 'u-t'), userText('w', 'go w', 'u-w')]);
  await watching;
  await s.whenIdle({ ignoreRunningTools: true });
  await s.close();
  // Typed by the user into session a after the process ended (the queue is durable).
  const store = new SqliteStore({ path: db });
  await store.enqueue([userText('a', 'later words', 'u-a2')]);
  await store.close();
}

describe('a system scoped to its sessions', () => {

  it("neither runs, interrupts nor waits for another session's work", async () => {
    const db = join(tempDir(), 'state.db');
    await leaveWork(db);
    const requests: string[] = [];
    const events: RuntimeEvent[] = [];
    const s = system(db, ['b'], requests, events);
    await s.start();
    await s.send(userText('b', 'quick question', 'u-b'));
    // Quiescent although t's timer and w's subscription are still in the store.
    const end = await s.whenQuiescent();
    await s.close();
    expect(end.kind).toBe('quiescent');
    expect(requests).toEqual(['b']);
    expect(events.filter((e) => e.threadId !== 'b')).toEqual([]);
    // a's call is still outstanding, its input still queued: the next run of session a gets both.
    const store = new SqliteStore({ path: db });
    expect((await store.threadsWithPendingCalls()).map((p) => p.threadId)).toContain('a');
    expect((await store.pendingInputs()).map((i) => i.id)).toEqual(['u-a2']);
    expect((await store.pendingInputs(['b', 't'])).map((i) => i.id)).toEqual([]);
    expect((await store.nextTimer(['a', 'b']))).toBeUndefined();
    expect((await store.nextTimer(['t']))?.threadId).toBe('t');
    expect((await store.activeSubscriptions(['a', 'b', 't']))).toEqual([]);
    expect((await store.activeSubscriptions(['w'])).map((x) => x.thread.id)).toEqual(['w']);
    await store.close();
  });

  it('the session that is continued recovers its own work', async () => {
    const db = join(tempDir(), 'state.db');
    await leaveWork(db);
    const requests: string[] = [];
    const events: RuntimeEvent[] = [];
    const s = system(db, ['a'], requests, events);
    await s.start();
    await s.whenIdle();
    await s.close();
    expect(new Set(events.filter((e) => e.type === 'tool-interrupted').map((e) => e.threadId))).toEqual(new Set(['a']));
    expect(requests.length).toBeGreaterThan(0);
    expect(new Set(requests)).toEqual(new Set(['a']));
  });

  it('a session started later in the same process joins with runRoot', async () => {
    const db = join(tempDir(), 'state.db');
    await leaveWork(db);
    const requests: string[] = [];
    const s = system(db, ['b'], requests, []);
    await s.start();
    s.runRoot('c');
    await s.send(userText('c', 'go c', 'u-c'));
    const end = await s.whenQuiescent();
    await s.close();
    expect(end.kind).toBe('quiescent');
    expect(requests).toEqual(['c']);
  });

  it('unscoped, it runs every thread of the store (one process, one store)', async () => {
    const db = join(tempDir(), 'state.db');
    await leaveWork(db);
    const requests: string[] = [];
    const events: RuntimeEvent[] = [];
    const s = system(db, undefined, requests, events);
    await s.start();
    await s.whenIdle();
    await s.close();
    expect(new Set(events.filter((e) => e.type === 'tool-interrupted').map((e) => e.threadId))).toEqual(new Set(['a']));
    expect(new Set(requests)).toEqual(new Set(['a']));
  });
});

// Token usage is stored per completion with its model, and summed per thread and model for
// displays (the CLI prices each model's share); the per-thread totals stay as they were.
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { userText } from './input.js';
import { LocalSystem } from './local-system.js';
import { MemoryStore } from './memory-store.js';
import { addUsage, type Usage } from './messages.js';
import type { CompletionRequest } from './provider.js';
import { ScriptedProvider, type ScriptedReply } from './scripted-provider.js';
import { SqliteStore } from './sqlite-store.js';
import { UNRECORDED_MODEL, type RuntimeStore, type ThreadRecord } from './store.js';
import { lastText, makeHarness, tempDir, threadOf, type Mode, type StoreKind } from './test-support/harness.js';

const combos: Array<[Mode, StoreKind]> = [
  ['local', 'memory'],
  ['local', 'sqlite'],
  ['step', 'memory'],
  ['step', 'sqlite'],
];

const usage = (input: number, output: number, cacheWrite: number, cacheRead: number): Usage => ({
  input_tokens: input,
  output_tokens: output,
  cache_creation_input_tokens: cacheWrite,
  cache_read_input_tokens: cacheRead,
});

// Distinct figures per completion, so a sum that takes the wrong rows can't come out right.
const ROOT_SPAWN = usage(1000, 100, 800, 0);
const ROOT_WAIT = usage(20, 30, 40, 900);
const ROOT_THANKS = usage(3, 7, 11, 1300);
const CHILD_CLOSE = usage(500, 60, 0, 700);

/** The root spawns a child and waits; the child closes with a report; the root thanks it. */
function brain(r: CompletionRequest): ScriptedReply {
  const me = threadOf(r);
  if (me.stack.length > 1) {
    return { usage: CHILD_CLOSE, toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'done' } } };
  }
  if (lastText(r).includes('Report from')) return { text: 'Thanks.', usage: ROOT_THANKS };
  if (lastText(r).startsWith('Spawned thread')) return { text: 'Waiting for the child.', usage: ROOT_WAIT };
  return { usage: ROOT_SPAWN, toolCall: { name: 'spawn_thread', input: { instructions: 'do it', child_of: me.stack } } };
}

/** The root's first completion runs on model-a, everything after it on model-b (a /model switch). */
const model = (t: ThreadRecord) => (t.kind === 'root' && t.completions === 0 ? 'model-a' : 'model-b');

async function runScenario(send: (text: string) => Promise<void>, settle: () => Promise<void>): Promise<void> {
  await send('Delegate this.');
  await settle();
}

function expectBreakdown(rows: Awaited<ReturnType<RuntimeStore['usageByThread']>>, childId: string): void {
  expect(rows).toEqual([
    { threadId: 'root', kind: 'root', model: 'model-a', completions: 1, usage: ROOT_SPAWN },
    { threadId: 'root', kind: 'root', model: 'model-b', completions: 2, usage: addUsage(ROOT_WAIT, ROOT_THANKS) },
    { threadId: childId, kind: 'child', model: 'model-b', completions: 1, usage: CHILD_CLOSE },
  ]);
}

describe.each(combos)('usage per thread and model in %s mode with the %s store', (mode, storeKind) => {
  it('sums each thread\'s completions per model, the root included, and reports each completion as it finishes', async () => {
    const h = makeHarness(mode, storeKind, { brain, system: { model } });
    await runScenario((t) => h.send(userText('root', t, 'u1')), () => h.settle());

    const childId = h.events.flatMap((e) => (e.type === 'thread-spawned' ? [e.childId] : []))[0];
    expect(childId).toBeDefined();
    expectBreakdown(await h.store.usageByThread('root'), childId);

    const finished = h.events.flatMap((e) => (e.type === 'completion-finished' ? [[e.threadId, e.model, e.usage] as const] : []));
    expect(finished).toHaveLength(4);
    expect(finished[0]).toEqual(['root', 'model-a', ROOT_SPAWN]);
    // The child and the root's second completion run concurrently: either may finish first.
    expect(finished.slice(1, 3)).toEqual(
      expect.arrayContaining([
        ['root', 'model-b', ROOT_WAIT],
        [childId, 'model-b', CHILD_CLOSE],
      ]),
    );
    expect(finished[3]).toEqual(['root', 'model-b', ROOT_THANKS]);

    // The thread totals are untouched by the per-model records, and agree with them.
    const root = (await h.store.loadThread('root'))!.record;
    expect(root.completions).toBe(3);
    expect(root.usage).toEqual(addUsage(ROOT_SPAWN, addUsage(ROOT_WAIT, ROOT_THANKS)));
    // Another root's usage is not mixed in.
    expect(await h.store.usageByThread('nobody')).toEqual([]);
    await h.close();
  });
});

describe('stored usage', () => {
  it('survives reopening the SQLite file', async () => {
    const dir = tempDir();
    try {
      const path = join(dir, 'state.db');
      const store = new SqliteStore({ path });
      const system = new LocalSystem({ store, provider: new ScriptedProvider(brain), model });
      const events: string[] = [];
      system.subscribe((e) => {
        if (e.type === 'thread-spawned') events.push(e.childId);
      });
      await runScenario((t) => system.sendUserText('root', t, 'u1').then(() => {}), () => system.whenIdle());
      await system.close();

      const reopened = new SqliteStore({ path });
      expectBreakdown(await reopened.usageByThread('root'), events[0]);
      await reopened.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each(['memory', 'sqlite'] as const)(
    'the %s store lists usage a thread\'s totals hold without per-completion records under %s',
    async (kind) => {
      const dir = tempDir();
      const store: RuntimeStore = kind === 'memory' ? new MemoryStore() : new SqliteStore({ path: join(dir, 'state.db') });
      try {
        await store.ensureRootThread('root');
        const base = {
          threadId: 'root',
          append: [],
          consumed: [],
          batch: [],
          subscriptions: [],
          hasDeferred: false,
          compacting: false,
          enqueue: [],
          contextTokens: 0,
        };
        // What a store written before per-completion records holds: totals only.
        await store.commit({ ...base, completions: 2, usage: usage(10, 20, 30, 40) });
        await store.commit({ ...base, completions: 1, usage: usage(1, 2, 3, 4), completionUsage: [{ model: 'm', usage: usage(1, 2, 3, 4) }] });
        expect(await store.usageByThread('root')).toEqual([
          { threadId: 'root', kind: 'root', model: 'm', completions: 1, usage: usage(1, 2, 3, 4) },
          { threadId: 'root', kind: 'root', model: UNRECORDED_MODEL, completions: 2, usage: usage(10, 20, 30, 40) },
        ]);
        // A thread that never ran a completion has no entry.
        await store.ensureRootThread('idle');
        expect(await store.usageByThread('idle')).toEqual([]);
      } finally {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

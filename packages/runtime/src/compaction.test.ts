import { describe, expect, it } from 'vitest';
import { userText } from './input.js';
import type { InputMessage } from './input.js';
import type { HistoryMessage } from './messages.js';
import type { CompletionRequest } from './provider.js';
import type { ScriptedReply } from './scripted-provider.js';
import { lastText, makeHarness, shape, threadOf, toolUses, type Mode, type StoreKind } from './test-support/harness.js';
import { heldTool } from './test-support/tools.js';

const combos: Array<[Mode, StoreKind]> = [
  ['local', 'memory'],
  ['local', 'sqlite'],
  ['step', 'memory'],
  ['step', 'sqlite'],
];

let summaries = 0;
/** Summarises when asked to compact; starts a job on "hold"; spawns on "spawn"; else acknowledges. */
function brain(r: CompletionRequest): ScriptedReply {
  const t = lastText(r);
  const me = threadOf(r);
  if (t.includes('compaction thread')) {
    summaries++;
    // Prove the summariser saw the history: name the user messages it read.
    const said = r.messages.flatMap((m) => (m.role === 'user' ? m.content : [])).flatMap((b) => (b.type === 'text' && b.text.startsWith('note') ? [b.text] : []));
    return { text: `SUMMARY ${summaries} of: ${said.join(', ')}` };
  }
  if (t === 'hold') return { text: 'Starting a job.', toolCall: { name: 'hold', input: {} } };
  if (t === 'spawn') return { toolCall: { name: 'spawn_thread', input: { instructions: 'note from child', child_of: me.stack } } };
  return { text: `ack ${t.slice(0, 30)}` };
}

const compaction = (threadId: string, id: string): InputMessage => ({ id, threadId, body: { kind: 'compaction' } });

function wellFormed(history: readonly HistoryMessage[]): void {
  for (const u of toolUses(history)) {
    const results = history.flatMap((m) => m.content).filter((b) => b.type === 'tool_result' && b.tool_use_id === u.id);
    expect(results.length, `result of ${u.name}`).toBeLessThanOrEqual(1);
  }
  expect(history[0].role).toBe('user');
}

describe.each(combos)('compaction in %s mode with the %s store', (mode, storeKind) => {
  it('summarises through a child, replaces the prefix on load and deletes nothing', async () => {
    const h = makeHarness(mode, storeKind, { brain });
    for (const n of [1, 2, 3]) {
      await h.send(userText('t', `note ${n}`, `u${n}`));
      await h.settle();
    }
    const before = (await h.store.loadThread('t'))!;
    await h.send(compaction('t', 'c1'));
    await h.settle();
    const after = (await h.store.loadThread('t'))!;
    expect(after.history).toHaveLength(1);
    expect(JSON.stringify(after.history[0])).toMatch(/SUMMARY \d+ of: note 1, note 2, note 3/);
    expect(after.record.messageCount).toBe(before.record.messageCount); // nothing deleted
    expect(after.record.compacting).toBe(false);
    expect(h.events.some((e) => e.type === 'compaction-applied')).toBe(true);
    // The conversation goes on from the summary.
    await h.send(userText('t', 'note 4', 'u4'));
    await h.settle();
    expect(shape((await h.store.loadThread('t'))!.history)).toEqual(['user:text', 'user:text', 'assistant:text']);
    await h.close();
  });

  it('never splits a pending tool call from its result', async () => {
    const hold = heldTool();
    const h = makeHarness(mode, storeKind, { brain, tools: [hold] });
    await h.send(userText('t', 'note 1', 'u1'));
    await h.settle();
    await h.send(userText('t', 'hold', 'u2'));
    await h.settleSlices();
    await h.send(compaction('t', 'c1'));
    await h.settleSlices();
    let t = (await h.store.loadThread('t'))!;
    // Summary, then the turn holding the pending call: its result can still attach.
    expect(shape(t.history)).toEqual(['user:text', 'assistant:text+tool_use']);
    await [...hold.held.values()][0]('job finished');
    await h.settleSlices();
    t = (await h.store.loadThread('t'))!;
    expect(shape(t.history).slice(-2)).toEqual(['user:tool_result', 'assistant:text']);
    wellFormed(t.history);
    await h.close();
  });

  it('a second compaction after a prior one summarises the summary and what followed', async () => {
    const hold = heldTool();
    const h = makeHarness(mode, storeKind, { brain, tools: [hold] });
    await h.send(userText('t', 'note 1', 'u1'));
    await h.settle();
    await h.send(compaction('t', 'c1'));
    await h.settle();
    await h.send(userText('t', 'note 2', 'u2'));
    await h.settle();
    await h.send(userText('t', 'hold', 'u3'));
    await h.settleSlices();
    await h.send(compaction('t', 'c2'));
    await h.settleSlices();
    const t = (await h.store.loadThread('t'))!;
    expect(shape(t.history)).toEqual(['user:text', 'assistant:text+tool_use']);
    const summary = JSON.stringify(t.history[0]);
    expect(summary).toContain('note 2');
    // Only the newest summary is shown.
    expect(JSON.stringify(t.history).split('[Summary of the conversation so far]')).toHaveLength(2);
    await [...hold.held.values()][0]('done');
    await h.settleSlices();
    wellFormed((await h.store.loadThread('t'))!.history);
    await h.close();
  });

  it('compacts inside a child thread, and a child spawned before a compaction keeps what it inherited', async () => {
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('root', 'note 1', 'u1'));
    await h.settle();
    await h.send(userText('root', 'spawn', 'u2'));
    await h.settle();
    const spawned = h.events.find((e) => e.type === 'thread-spawned');
    const childId = spawned!.type === 'thread-spawned' ? spawned!.childId : '';
    const childBefore = (await h.store.loadThread(childId))!.history;

    await h.send(compaction('root', 'c-root'));
    await h.settle();
    expect((await h.store.loadThread(childId))!.history).toEqual(childBefore);

    await h.send(userText(childId, 'note from child 2', 'u3'));
    await h.settle();
    await h.send(compaction(childId, 'c-child'));
    await h.settle();
    const child = (await h.store.loadThread(childId))!;
    expect(JSON.stringify(child.history[0])).toContain('SUMMARY');
    expect(child.history).toHaveLength(1);
    const root = (await h.store.loadThread('root'))!;
    expect(root.history).toHaveLength(1); // the root's own summary, untouched by the child's
    await h.close();
  });
});

describe('automatic compaction', () => {
  it('starts at 75% of the context window, applies once and does not loop', async () => {
    let completions = 0;
    const h = makeHarness('local', 'sqlite', {
      brain: (r) => {
        completions++;
        if (lastText(r).includes('compaction thread')) return { text: 'SUMMARY', usage: { input_tokens: 10 } };
        return { text: 'ok', usage: { input_tokens: r.messages.length > 2 ? 900 : 100 } };
      },
      system: { contextWindow: 1000 },
    });
    for (let i = 0; i < 3; i++) {
      await h.send(userText('t', `turn ${i}`, `u${i}`));
      await h.settle();
    }
    const applied = h.events.filter((e) => e.type === 'compaction-applied' && e.threadId === 't');
    expect(applied).toHaveLength(1);
    expect(completions).toBe(4); // three turns plus one summary
    await h.close();
  });
});

// What UIs need travels as fields of the typed events (and of the typed reading of a stored
// history), never only inside the text the model reads.
import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from './events.js';
import { readHistory, type HistoryEntry } from './history-reading.js';
import { userText, type InputMessage } from './input.js';
import { resultText } from './messages.js';
import type { CompletionRequest } from './provider.js';
import type { ScriptedReply } from './scripted-provider.js';
import { lastText, makeHarness, threadOf, toolUses, type Mode, type StoreKind } from './test-support/harness.js';
import { heldTool, watchTool } from './test-support/tools.js';
import type { AsyncTool } from './tool.js';

const combos: Array<[Mode, StoreKind]> = [
  ['local', 'memory'],
  ['local', 'sqlite'],
  ['step', 'memory'],
  ['step', 'sqlite'],
];

const TASK = 'Fix the parser\nthen run its tests';

const ofType = <T extends RuntimeEvent['type']>(events: RuntimeEvent[], type: T) =>
  events.filter((e): e is Extract<RuntimeEvent, { type: T }> => e.type === type);

const injectedEntries = (entries: HistoryEntry[]) => entries.filter((e): e is Extract<HistoryEntry, { kind: 'injected' }> => e.kind === 'injected');

/** A tool that gives UIs a title, a summary and a diff beside what the model reads. */
function patchTool(): AsyncTool {
  return {
    kind: 'async',
    name: 'patch',
    description: 'Change a file.',
    input_schema: { type: 'object', properties: {} },
    dispatch(_input, ctx) {
      setImmediate(() =>
        void ctx.respond({
          content: 'Replaced text in a.ts (+1 -1).',
          display: { title: 'Edit a.ts', summary: '+1 -1', diff: '@@ -1 +1 @@\n-a\n+b' },
        }),
      );
    },
  };
}

describe.each(combos)('event fields for UIs in %s mode with the %s store', (mode, storeKind) => {
  it("carries a child's task and reports in its own words; the stored history reads back the same", async () => {
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length === 1) {
        if (toolUses(r.messages).some((u) => u.name === 'spawn_thread')) return { text: 'Noted.' };
        return { toolCall: { name: 'spawn_thread', input: { instructions: TASK, child_of: me.stack } } };
      }
      if (lastText(r).startsWith('Report sent')) {
        return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'Parser fixed.' } } };
      }
      return { toolCall: { name: 'report_to_parent', input: { report: 'halfway there' } } };
    };
    const h = makeHarness(mode, storeKind, {
      brain,
      system: { reviewReport: async (_t, report) => (report === 'Parser fixed.' ? { note: 'The user accepted it.' } : {}) },
    });
    await h.send(userText('root', 'fix it', 'u1'));
    await h.settle();

    const [spawned] = ofType(h.events, 'thread-spawned');
    expect(spawned).toMatchObject({ kind: 'child', task: TASK });
    const child = spawned.childId;
    const reports = ofType(h.events, 'event-injected').filter((e) => e.threadId === 'root');
    expect(reports.map((e) => e.task)).toEqual([TASK, TASK]);
    expect(reports.map((e) => [e.source, e.childThreadId, e.report])).toEqual([
      ['report', child, { text: 'halfway there', closed: false, from: 'child', childThreadId: child }],
      ['report', child, { text: 'Parser fixed.', note: 'The user accepted it.', closed: true, from: 'child', childThreadId: child }],
    ]);
    // The model reads them framed: the fields are not just a copy of its text.
    for (const e of reports) expect(resultText(e.content)).not.toBe(e.report!.text);
    // Built-in tools say what they did in a few words too.
    const spawnResult = ofType(h.events, 'tool-result').find((e) => e.threadId === 'root');
    expect(spawnResult?.display).toEqual({ summary: `started thread ${child}` });

    const entries = readHistory((await h.store.loadThread('root'))!.history);
    expect(entries.slice(0, 2).map((e) => e.kind)).toEqual(['user', 'tool']);
    // Read back, the spawn call says which child it started, as the live result's display did.
    expect(entries[1]).toMatchObject({ kind: 'tool', spawned: child });
    expect(injectedEntries(entries).map((e) => [e.source, e.task, e.report])).toEqual([
      ['report', TASK, { text: 'halfway there', closed: false, from: 'child' }],
      // Read back, the note stays with the report's text.
      ['report', TASK, { text: 'Parser fixed.\n\nThe user accepted it.', closed: true, from: 'child', childThreadId: child }],
    ]);
    await h.close();
  });

  it("carries a parent's message without its framing, live and read back from the child's history", async () => {
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      const t = lastText(r);
      if (me.stack.length === 1) {
        const spawnedId = /Spawned thread (\S+)\./.exec(t)?.[1];
        if (spawnedId) return { toolCall: { name: 'send_message_to_child', input: { thread_id: spawnedId, message: 'use tabs' } } };
        if (t === 'go') return { toolCall: { name: 'spawn_thread', input: { instructions: 'Format the code', child_of: me.stack } } };
        return { text: 'ok' };
      }
      if (t.includes('use tabs')) return { toolCall: { name: 'close_thread', input: { thread_id: me.id } } };
      return { toolCall: { name: 'sleep_until_event_or_input', input: {} } };
    };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('root', 'go', 'u1'));
    await h.settle();
    const child = ofType(h.events, 'thread-spawned')[0].childId;
    const message = ofType(h.events, 'event-injected').find((e) => e.threadId === child);
    expect(message).toMatchObject({ source: 'parent', message: 'use tabs' });
    expect(resultText(message!.content)).not.toBe('use tabs');
    const read = injectedEntries(readHistory((await h.store.loadThread(child))!.history));
    expect(read.map((e) => [e.source, e.message])).toEqual([['parent', 'use tabs']]);
    // The child closed without a report: its parent hears it as a closing with no words.
    const closing = ofType(h.events, 'event-injected').find((e) => e.threadId === 'root');
    expect(closing?.report).toEqual({ text: '', closed: true, from: 'child', childThreadId: child });
    await h.close();
  });

  it('says which calls are waits, what a thread waits on, and how a call ended, live and read back', async () => {
    const watch = watchTool();
    const hold = heldTool();
    const brain = (r: CompletionRequest): ScriptedReply => {
      const t = lastText(r);
      if (t === 'watch') return { toolCall: { name: 'watch', input: {} } };
      if (t === 'wait') return { toolCall: { name: 'sleep_until_event_or_input', input: {} } };
      if (t === 'hold') return { toolCall: { name: 'hold', input: {} } };
      return { text: 'ok' };
    };
    const h = makeHarness(mode, storeKind, { brain, tools: [watch, hold] });
    await h.send(userText('t', 'watch', 'u1'));
    await h.settle();
    const ctx = [...watch.ctxs.values()][0];

    await h.send(userText('t', 'wait', 'u2'));
    await h.settleSlices();
    expect(ofType(h.events, 'slice-finished').at(-1)).toMatchObject({ outcome: 'awaiting-tool', waiting: 'passive' });
    // An event ends the wait: it did its job, which the event says.
    await ctx.emit({ content: 'build 7 passed', associative: true, id: 'e1', display: { summary: 'passed' } });
    await h.settleSlices();
    const sleepCall = ofType(h.events, 'tool-call').find((e) => e.call.name === 'sleep_until_event_or_input')!;
    expect(sleepCall.passive).toBe(true);
    expect(ofType(h.events, 'tool-call').find((e) => e.call.name === 'watch')!.passive).toBeUndefined();
    expect(ofType(h.events, 'tool-interrupted')).toEqual([{ type: 'tool-interrupted', threadId: 't', callId: sleepCall.call.id, reason: 'input', passive: true }]);
    expect(ofType(h.events, 'event-injected').at(-1)).toMatchObject({ source: 'event', display: { summary: 'passed' } });

    // A job under way: the thread waits on work; the user's message interrupts it.
    await h.send(userText('t', 'hold', 'u3'));
    await h.settleSlices();
    expect(ofType(h.events, 'slice-finished').at(-1)).toMatchObject({ outcome: 'awaiting-tool', waiting: 'active' });
    await h.send(userText('t', 'never mind', 'u4'));
    await h.settleSlices();
    expect(ofType(h.events, 'tool-interrupted').at(-1)).toEqual({
      type: 'tool-interrupted',
      threadId: 't',
      callId: ofType(h.events, 'tool-call').find((e) => e.call.name === 'hold')!.call.id,
      reason: 'user',
    });

    const history = (await h.store.loadThread('t'))!.history;
    // Display data is for UIs: never stored in what the model reads.
    expect(JSON.stringify(history)).not.toContain('"display"');
    const entries = readHistory(history);
    const tools = entries.flatMap((e) => (e.kind === 'tool' ? [[e.call.name, e.ended]] : []));
    expect(tools).toEqual([
      ['watch', undefined],
      ['sleep_until_event_or_input', 'woken'],
      ['hold', 'interrupted'],
    ]);
    expect(injectedEntries(entries).map((e) => [e.source, e.originalToolName, resultText(e.content)])).toEqual([['event', 'watch', 'build 7 passed']]);
    await h.close();
  });

  it("carries a tool's display data on its result, not into history", async () => {
    const brain = (r: CompletionRequest): ScriptedReply => (lastText(r) === 'patch' ? { toolCall: { name: 'patch', input: {} } } : { text: 'done' });
    const h = makeHarness(mode, storeKind, { brain, tools: [patchTool()] });
    await h.send(userText('t', 'patch', 'u1'));
    await h.settle();
    const [result] = ofType(h.events, 'tool-result');
    expect(result).toMatchObject({
      content: [{ type: 'text', text: 'Replaced text in a.ts (+1 -1).' }],
      display: { title: 'Edit a.ts', summary: '+1 -1', diff: '@@ -1 +1 @@\n-a\n+b' },
    });
    expect(JSON.stringify((await h.store.loadThread('t'))!.history)).not.toContain('@@ -1 +1 @@');
    await h.close();
  });

  it('reads a compacted history as a summary first', async () => {
    const brain = (r: CompletionRequest): ScriptedReply =>
      lastText(r).includes('compaction thread') ? { text: 'We talked about the parser.' } : { text: 'ack' };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('t', 'the parser', 'u1'));
    await h.settle();
    const compact: InputMessage = { id: 'c1', threadId: 't', body: { kind: 'compaction' } };
    await h.send(compact);
    await h.settle();
    await h.send(userText('t', 'go on', 'u2'));
    await h.settle();
    const entries = readHistory((await h.store.loadThread('t'))!.history);
    expect(entries).toEqual([
      { kind: 'summary', text: 'We talked about the parser.' },
      { kind: 'user', text: 'go on' },
      { kind: 'assistant', text: 'ack' },
    ]);
    await h.close();
  });
});

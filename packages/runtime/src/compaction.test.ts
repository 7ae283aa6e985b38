import { describe, expect, it } from 'vitest';
import { userText } from './input.js';
import type { InputMessage } from './input.js';
import type { HistoryMessage } from './messages.js';
import type { CompletionRequest } from './provider.js';
import type { ScriptedReply } from './scripted-provider.js';
import { lastText, makeHarness, shape, threadOf, toolUses, type Mode, type StoreKind } from './test-support/harness.js';
import { echoTool, heldTool } from './test-support/tools.js';
import { SqliteStore } from './sqlite-store.js';
import { toRequestMessages } from './history.js';

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

/** Every text a request's messages hold (tool results' too), in order. */
function textsOf(messages: readonly HistoryMessage[]): string {
  return messages
    .flatMap((m) => m.content)
    .map((b) => (b.type === 'text' ? b.text : b.type === 'tool_result' ? b.content.map((c) => (c.type === 'text' ? c.text : '')).join('') : ''))
    .join('\n');
}

const SECTIONED = '## Goal\nA CSV parser.\n## Current work\nQuoted fields in src/csv.ts.\n## Next step\nRun the tests.\n## Files\nsrc/csv.ts\n## Errors\nNone.\n## Decisions\nNo dependencies.\n## Pending\nNone.';

/**
 * Works every user message with one echo call (a long argument, so the history grows past what is
 * summarised whole), then answers; summarises with the sections it was asked for.
 */
function worker(requests: CompletionRequest[], compactions: CompletionRequest[]) {
  return (r: CompletionRequest): ScriptedReply => {
    const last = r.messages.at(-1)!;
    if (lastText(r).includes('compaction thread')) {
      compactions.push(r);
      return { text: SECTIONED };
    }
    requests.push(r);
    const block = last.content.at(-1)!;
    if (block.type === 'text') {
      return { thinking: 'plan', text: 'Working.', toolCall: { id: `toolu_${requests.length}`, name: 'echo', input: { text: 'z'.repeat(700) } } };
    }
    return { thinking: 'check', text: 'Done.' };
  };
}

const ASKED = [
  'Build a CSV parser in src/csv.ts, without dependencies.',
  'Handle quoted fields too.',
  'Semicolons as separators when the file says so.',
  'Now add tests for all of it.',
];

describe.each(combos)('what a compacted thread keeps, in %s mode with the %s store', (mode, storeKind) => {
  it("carries every user message verbatim, the summary's sections and its latest turns as they were", async () => {
    const requests: CompletionRequest[] = [];
    const compactions: CompletionRequest[] = [];
    const h = makeHarness(mode, storeKind, { brain: worker(requests, compactions), tools: [echoTool()] });
    for (const [i, text] of ASKED.entries()) {
      await h.send(userText('t', text, `u${i}`));
      await h.settle();
    }
    const before = (await h.store.loadThread('t'))!.history;
    await h.send(compaction('t', 'c1'));
    await h.settle();
    await h.send(userText('t', 'Run them and fix what fails.', 'u5'));
    await h.settle();

    // The compaction was asked for named sections.
    expect(compactions).toHaveLength(1);
    for (const heading of ['## Goal', '## Current work', '## Next step', '## Files', '## Errors']) expect(lastText(compactions[0])).toContain(heading);

    const next = requests.find((r) => lastText(r) === 'Run them and fix what fails.')!;
    const first = textsOf(next.messages.slice(0, 1));
    expect(first).toContain('[Summary of the conversation so far]');
    expect(first).toContain(SECTIONED);
    // The user's words, by the runtime: the older ones in the record, the latest in the kept turns.
    for (const text of ASKED.slice(0, 3)) expect(first).toContain(`<user_message>\n${text}\n</user_message>`);
    for (const text of [...ASKED, 'Run them and fix what fails.']) expect(textsOf(next.messages)).toContain(text);
    expect(first.match(/<user_message>/g)).toHaveLength(3);
    // The last exchange as it was, its thinking left out (it was bound to the replaced prefix);
    // the exchanges before it are gone.
    const calls = toolUses(before);
    expect(toolUses(next.messages).map((c) => c.id)).toEqual([calls.at(-1)!.id]);
    const lastExchange = before.slice(before.findIndex((m) => textsOf([m]) === ASKED[3]));
    const unthought = lastExchange.map((m) => ({ role: m.role, content: m.content.filter((b) => b.type !== 'thinking') }));
    const summaryAlone: HistoryMessage = { role: 'user', content: next.messages[0].content.slice(0, 1) };
    expect(next.messages.slice(0, -1)).toEqual(toRequestMessages([summaryAlone, ...unthought]));
    expect(next.messages.flatMap((m) => m.content).some((b) => b.type === 'thinking')).toBe(false);
    wellFormed(next.messages);
    await h.close();
  });

  it('keeps every user message through two compactions, and shows the same bytes on every load', async () => {
    const requests: CompletionRequest[] = [];
    const h = makeHarness(mode, storeKind, { brain: worker(requests, []), tools: [echoTool()] });
    const asked = [...ASKED, 'Run them and fix what fails.', 'Commit it.'];
    for (const [i, text] of asked.entries()) {
      await h.send(userText('t', text, `u${i}`));
      await h.settle();
      if (i === 3 || i === 4) {
        await h.send(compaction('t', `c${i}`));
        await h.settle();
      }
    }
    expect(h.events.filter((e) => e.type === 'compaction-applied')).toHaveLength(2);
    const last = requests.at(-1)!;
    for (const text of asked) expect(textsOf(last.messages)).toContain(text);
    // Only the newest summary is shown, and nothing was asked twice.
    expect(textsOf(last.messages).split('[Summary of the conversation so far]')).toHaveLength(2);
    for (const text of asked) expect(textsOf(last.messages).split(text)).toHaveLength(2);
    wellFormed(last.messages);
    // Turns after the summary keep their thinking only if they were made after the switch, and
    // the view is rebuilt byte for byte (a changed prefix would void that thinking).
    const view = (await h.store.loadThread('t'))!;
    expect(JSON.stringify((await h.store.loadThread('t'))!.history)).toBe(JSON.stringify(view.history));
    if (storeKind === 'sqlite') {
      const again = new SqliteStore({ path: (h.store as SqliteStore).path });
      expect(JSON.stringify((await again.loadThread('t'))!.history)).toBe(JSON.stringify(view.history));
      await again.close();
    }
    await h.close();
  });

  it("keeps a child's task and the user's messages it inherited when the child is compacted", async () => {
    const task = 'Refactor the lexer; keep its public API as it is.';
    const h = makeHarness(mode, storeKind, {
      brain: (r) => {
        if (lastText(r).includes('compaction thread')) return { text: 'The lexer is half done.' };
        const me = threadOf(r);
        if (me.stack.length === 1) return { toolCall: { name: 'spawn_thread', input: { instructions: task, child_of: me.stack } } };
        return { text: `ok ${lastText(r).slice(0, 20)}` };
      },
    });
    await h.send(userText('root', 'Clean up the lexer module.', 'u1'));
    await h.settleSlices();
    const spawned = h.events.find((e) => e.type === 'thread-spawned');
    const childId = spawned?.type === 'thread-spawned' ? spawned.childId : '';
    await h.send(userText(childId, 'Start with the tokens.', 'u2'));
    await h.settleSlices();
    await h.send(compaction(childId, 'c1'));
    await h.settleSlices();
    const child = (await h.store.loadThread(childId))!;
    const summary = textsOf(child.history.slice(0, 1));
    expect(summary).toContain('The lexer is half done.');
    expect(summary).toMatch(new RegExp(`<task>\\n[^]*Follow these instructions exactly:\\n\\n${task.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^]*</task>`));
    expect(summary).toContain('<user_message>\nClean up the lexer module.\n</user_message>');
    expect(summary).toContain('<user_message>\nStart with the tokens.\n</user_message>');
    // The child still knows which thread it is: its own line comes last.
    expect(threadOf({ system: '', messages: child.history }).id).toBe(childId);
    await h.close();
  });
});

describe('the stores agree', () => {
  it('the memory and the SQLite store show a compacted thread with the same bytes', async () => {
    const views: string[] = [];
    for (const storeKind of ['memory', 'sqlite'] as const) {
      const h = makeHarness('local', storeKind, { brain: worker([], []), tools: [echoTool()] });
      for (const [i, text] of ASKED.entries()) {
        await h.send(userText('t', text, `u${i}`));
        await h.settle();
      }
      await h.send(compaction('t', 'c1'));
      await h.settle();
      await h.send(userText('t', 'Run them and fix what fails.', 'u5'));
      await h.settle();
      views.push(JSON.stringify((await h.store.loadThread('t'))!.history));
      await h.close();
    }
    expect(views[0]).toContain('<user_message>');
    expect(views[1]).toBe(views[0]);
  });
});

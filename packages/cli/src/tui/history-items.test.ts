import { describe, expect, it } from 'vitest';
import { LocalSystem, MemoryStore, ScriptedProvider, type AsyncTool, type CompletionRequest, type HistoryMessage, type ScriptedReply } from '@infinity-code/runtime';
import { DEFAULT_MODEL } from '@infinity-code/runtime/models';
import { storedResultDisplay } from '@infinity-code/tools';
import { callDisplays, resultDisplays } from './history-items.js';
import { initialState, reduce, type TranscriptItem, type UiState } from './state.js';
import { heldTool, lastText, threadOf } from './testing.js';

const info = { model: DEFAULT_MODEL, contextWindow: 200_000, backend: 'copy', sessionId: 'root' };

/** Answers at once, like a file read; no display line, so live and resumed rows name it alike. */
const lookTool: AsyncTool = {
  kind: 'async',
  name: 'look',
  description: 'Look at a file.',
  input_schema: { type: 'object', properties: { path: { type: 'string' } } },
  dispatch(_input, ctx) {
    setImmediate(() => void ctx.respond({ content: '1\tconst a = 1;' }));
  },
};

/**
 * What a row says, without its id. A tool row by its status only: live, it shows what its tool
 * gave UIs (display line, summary), which is not stored in history.
 */
function shown(i: TranscriptItem): unknown {
  switch (i.kind) {
    case 'tool':
      return [i.kind, i.status];
    case 'report':
      return [i.kind, i.from, i.text, i.closed === true];
    case 'event':
      return [i.kind, i.source, i.lines];
    case 'notice':
      return [i.kind, i.level];
    case 'hunk':
      return [i.kind, i.path, i.lines];
    default:
      return [i.kind, i.text];
  }
}

describe('a resumed session shows its earlier transcript', () => {
  it('as the runtime reads the stored history: the same rows live events made', async () => {
    const build = heldTool('build', 'build {}');
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length > 1) return { toolCall: { name: 'close_thread', input: { thread_id: me.id, report_to_parent: 'Parser fixed.' } } };
      const t = lastText(r);
      if (t === 'fix the bug') return { text: 'Reading it.', toolCall: { name: 'look', input: { path: 'a.ts' } } };
      if (t.startsWith('1\t')) return { toolCall: { name: 'spawn_thread', input: { instructions: 'Fix the parser\nand test it', child_of: me.stack } } };
      if (t === 'build it') return { toolCall: { name: 'build', input: {} } };
      // The interrupted call's result comes first in the same message.
      if (t.endsWith('never mind')) return { text: 'Stopped.' };
      return { text: 'Waiting.' };
    };
    const store = new MemoryStore();
    const system = new LocalSystem({ store, provider: new ScriptedProvider(brain), tools: [lookTool, build], model: info.model, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
    let live: UiState = initialState(info);
    system.subscribe((e) => (live = reduce(live, e)));
    await system.start();
    for (const text of ['fix the bug', 'build it', 'never mind']) {
      live = reduce(live, { type: 'ui:submit', text });
      await system.sendUserText('root', text);
      // The build is held until the next message interrupts it.
      await system.whenIdle({ ignoreRunningTools: text === 'build it' });
    }
    const history = (await store.loadThread('root'))!.history;
    await system.close();

    const resumed = reduce(initialState(info), { type: 'ui:history', messages: history });
    expect(resumed.items.map(shown)).toEqual(live.items.map(shown));
    expect(resumed.items.map(shown)).toContainEqual(['report', 'Fix the parser', 'Parser fixed.', true]);
    expect(resumed.items.at(-1)).toMatchObject({ kind: 'assistant', text: 'Stopped.' });
    const tools = resumed.items.filter((i) => i.kind === 'tool');
    expect(tools[0]).toMatchObject({ display: 'look {"path":"a.ts"}', summary: '1\tconst a = 1;' });
    expect(tools[2]).toMatchObject({ display: 'build {}', summary: 'ended by your message' });
    // The spawn's result is worded for the model; the row says what the live one said.
    expect(tools[1]).toMatchObject({ summary: expect.stringMatching(/^started thread th_/) });
    expect(JSON.stringify(resumed.items)).not.toContain('its reports will arrive');

    // Given the session's display lines, every call row reads as it did live.
    const rows = (st: UiState) => st.items.flatMap((i) => (i.kind === 'tool' ? [[i.display, i.summary, i.status]] : []));
    const withLines = reduce(initialState(info), { type: 'ui:history', messages: history, displays: callDisplays(history, (c) => system.callDisplay(c)) });
    expect(rows(withLines)).toEqual(rows(live));
    expect(rows(withLines)[1]?.[0]).toBe('Spawn thread: Fix the parser');
  });

  it('marks where a compaction summary stands for the older conversation', async () => {
    // The only child is the compaction's, which writes the summary.
    const brain = (r: CompletionRequest): ScriptedReply => ({ text: threadOf(r).stack.length > 1 ? 'We talked.' : 'ok' });
    const store = new MemoryStore();
    const system = new LocalSystem({ store, provider: new ScriptedProvider(brain), model: info.model, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
    await system.start();
    await system.sendUserText('root', 'hello');
    await system.whenIdle();
    await system.compact('root');
    await system.whenIdle();
    await system.sendUserText('root', 'again');
    await system.whenIdle();
    const history = (await store.loadThread('root'))!.history;
    await system.close();
    const s = reduce(initialState(info), { type: 'ui:history', messages: history });
    expect(s.items.map(shown)).toEqual([['notice', 'compaction'], ['user', 'again'], ['assistant', 'ok']]);
  });

  it("shows a read's row as the live one did (its tool's words), never the model's <file …> excerpt", () => {
    const excerpt = '<file name="src/a.ts" lines="10">\n     3\tconst a = 1;\n     4\tconst b = 2;\n</file>';
    const history: HistoryMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'look at a.ts' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'read_file', input: { path: 'src/a.ts', start_line: 3, end_line: 4 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: [{ type: 'text', text: excerpt }] }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Seen.' }] },
    ];
    const s = reduce(initialState(info), { type: 'ui:history', messages: history, results: resultDisplays(history, storedResultDisplay) });
    expect(s.items.find((i) => i.kind === 'tool')).toMatchObject({ display: 'Read src/a.ts', summary: 'lines 3-4 of 10', status: 'ok' });
    expect(JSON.stringify(s.items)).not.toContain('<file');
  });

  it('shows a message that attached files as it was typed, naming the files', () => {
    const sent = 'compare @a.ts with @src/\n\n<attached-file path="a.ts" lines="1">\nconst a = 1;\n</attached-file>\n\n<attached-directory path="src/" lines="1">\nb.ts\n</attached-directory>';
    const s = reduce(initialState(info), {
      type: 'ui:history',
      messages: [
        { role: 'user', content: [{ type: 'text', text: sent }] },
        { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      ],
    });
    expect(s.items.map((i) => [i.kind, 'text' in i ? i.text : ''])).toEqual([
      ['user', 'compare @a.ts with @src/'],
      ['notice', 'attached a.ts, src/'],
      ['assistant', 'ok'],
    ]);
  });
});

import { describe, expect, it } from 'vitest';
import {
  LocalSystem,
  MemoryStore,
  ScriptedProvider,
  type AsyncTool,
  type AsyncToolContext,
  type Brain,
  type RuntimeEvent,
  type Tool,
} from '@infinity-code/runtime';
import { stripVTControlCharacters } from 'node:util';
import { render } from 'ink-testing-library';
import { ZERO_USAGE } from '@infinity-code/runtime/messages';
import { DEFAULT_MODEL } from '@infinity-code/runtime/models';
import { BackgroundRows } from './background-rows.js';
import { ThreadRows } from './thread-rows.js';
import { Entry } from './transcript.js';
import { initialState, reduce, type UiAction, type UiState } from './state.js';
import { heldTool, lastText, threadOf } from './testing.js';

const frame = (node: React.ReactElement) => {
  const ui = render(node);
  const out = stripVTControlCharacters(ui.lastFrame() ?? '');
  ui.unmount();
  return out;
};

const INFO = { model: DEFAULT_MODEL, contextWindow: 1000, backend: 'copy', sessionId: 'root' };

/** Runs a real system and folds every event it emits (and the given UI actions) into UI state. */
async function session(brain: Brain, tools: Tool[] = [], model = INFO.model) {
  const system = new LocalSystem({ store: new MemoryStore(), provider: new ScriptedProvider(brain), tools, model, retry: { baseDelayMs: 1, maxDelayMs: 2 } });
  let state: UiState = initialState({ ...INFO, model });
  const events: RuntimeEvent[] = [];
  system.subscribe((e) => {
    events.push(e);
    state = reduce(state, e);
  });
  await system.start();
  return {
    system,
    events,
    get state() {
      return state;
    },
    act(a: UiAction) {
      state = reduce(state, a);
    },
    async say(text: string) {
      state = reduce(state, { type: 'ui:submit', text });
      await system.sendUserText('root', text);
    },
  };
}

describe('the UI reducer over real runtime events', () => {
  it('ends a call the user interrupted above their message, once', async () => {
    const build = heldTool('build', '$ make');
    const s = await session((r) => (lastText(r) === 'build it' ? { text: 'Building.', toolCall: { name: 'build', input: {} } } : { text: 'Stopped; what now?' }), [build]);
    await s.say('build it');
    await s.system.whenIdle({ ignoreRunningTools: true });
    expect(s.state.running.map((r) => r.display)).toEqual(['$ make']);
    await s.say('never mind');
    await s.system.whenIdle({ ignoreRunningTools: true });
    expect(s.events.some((e) => e.type === 'tool-interrupted')).toBe(true);
    const items = s.state.items.map((i) => {
      if (i.kind === 'tool') return `tool:${i.status}:${i.summary}`;
      if (i.kind === 'hunk') return `hunk:${i.path}`;
      return i.kind === 'event' ? `event:${i.source}` : `${i.kind}:${i.text}`;
    });
    expect(items).toEqual(['user:build it', 'assistant:Building.', 'tool:interrupted:ended by your message', 'user:never mind', 'assistant:Stopped; what now?']);
    expect(s.state.running).toEqual([]);
    await s.system.close();
  });

  it('shows background command output as it arrives, named by the command', async () => {
    let ctx: AsyncToolContext | undefined;
    const exec: AsyncTool = {
      kind: 'async',
      name: 'execute_command',
      description: 'Run a command.',
      input_schema: { type: 'object', properties: { command: { type: 'string' } } },
      display: (input) => `$ ${String(input.command)}`,
      dispatch(_input, c) {
        ctx = c;
        void c.respond({ content: 'Still running in the background.', subscription: true });
      },
    };
    const s = await session((r) => (lastText(r) === 'test' ? { toolCall: { name: 'execute_command', input: { command: 'npm test' } } } : { text: 'ok' }), [exec]);
    await s.say('test');
    await s.system.whenIdle();
    const lines = Array.from({ length: 8 }, (_, i) => `ok ${i + 1}`).join('\n');
    await ctx!.emit({ content: lines, associative: true });
    await ctx!.emit({ content: 'exit code 0', associative: true, final: true });
    await s.system.whenIdle();
    const shown = s.state.items.filter((i) => i.kind === 'event');
    expect(shown).toEqual([
      expect.objectContaining({ source: '$ npm test', lines: ['ok 4', 'ok 5', 'ok 6', 'ok 7', 'ok 8'] }),
      expect.objectContaining({ source: '$ npm test', lines: ['exit code 0'] }),
    ]);
    expect(s.state.items.find((i) => i.kind === 'tool')).toMatchObject({ display: '$ npm test', summary: 'Still running in the background.' });
    await s.system.close();
  });

  it('keeps a live tail of a command from its first line until it ends in the background', async () => {
    let ctx: AsyncToolContext | undefined;
    const exec: AsyncTool = {
      kind: 'async',
      name: 'execute_command',
      description: 'Run a command.',
      input_schema: { type: 'object', properties: { command: { type: 'string' } } },
      display: (input) => `$ ${String(input.command)}`,
      dispatch(_input, c) {
        ctx = c;
      },
    };
    const s = await session((r) => (lastText(r) === 'test' ? { toolCall: { name: 'execute_command', input: { command: 'npm test' } } } : { text: 'ok' }), [exec]);
    await s.say('test');
    await s.system.whenIdle({ ignoreRunningTools: true });
    // Inside the inline window: the running row shows the output so far.
    ctx!.progress('compiling\n');
    ctx!.progress('PASS a.test.ts\nPASS b.test.ts');
    expect(s.state.running).toMatchObject([{ display: '$ npm test', tail: ['compiling', 'PASS a.test.ts', 'PASS b.test.ts'] }]);
    expect(s.state.background).toEqual([]);
    // It goes on in the background: the row moves there, with its tail.
    await ctx!.respond({ content: 'Still running in the background.', subscription: true });
    await s.system.whenIdle({ ignoreRunningTools: true });
    expect(s.state.running).toEqual([]);
    expect(s.state.background).toMatchObject([{ display: '$ npm test', tail: ['compiling', 'PASS a.test.ts', 'PASS b.test.ts'] }]);
    ctx!.progress('PASS c.test.ts');
    expect(s.state.background[0].tail).toEqual(['PASS a.test.ts', 'PASS b.test.ts', 'PASS c.test.ts']);
    // The command is over: its row goes at once, before its final event reaches the thread.
    ctx!.progress('[exit code: 0]', { final: true });
    expect(s.state.background).toEqual([]);
    await s.system.close();
  });

  it("a child's background command is shown with the child, and goes when the child closes", () => {
    let s = initialState(INFO);
    const spawn = { id: 'sp', name: 'spawn_thread', input: {} };
    s = reduce(s, { type: 'tool-call', threadId: 'root', call: spawn, sync: false });
    s = reduce(s, { type: 'thread-spawned', threadId: 'root', childId: 'kid', kind: 'child', spawnCallId: 'sp', task: 'Fix the parser\nthen test it' });
    s = reduce(s, { type: 'tool-call', threadId: 'kid', call: { id: 'c1', name: 'execute_command', input: {} }, sync: false, display: '$ make' });
    s = reduce(s, { type: 'tool-progress', threadId: 'kid', callId: 'c1', text: 'cc parser.c' });
    s = reduce(s, { type: 'tool-result', threadId: 'kid', toolUseId: 'c1', content: [], isError: false, subscription: true });
    expect(s.background).toEqual([{ callId: 'c1', threadId: 'kid', display: '$ make', tail: ['cc parser.c'] }]);
    // Another thread's call with the same id is not this one.
    s = reduce(s, { type: 'tool-progress', threadId: 'root', callId: 'c1', text: 'elsewhere', final: true });
    expect(s.background).toHaveLength(1);
    const f = frame(<BackgroundRows commands={s.background} rootThreadId="root" threads={s.threads} animate={false} />);
    expect(f).toContain('Running in the background (1)');
    expect(f).toMatch(/\$ make · Fix the parser\n\s+⎿ cc parser\.c/);
    s = reduce(s, { type: 'thread-closed', threadId: 'kid' });
    expect(s.background).toEqual([]);
  });

  it('a command whose result comes after it ended never shows as running in the background', () => {
    let s = initialState(INFO);
    s = reduce(s, { type: 'tool-call', threadId: 'root', call: { id: 'c', name: 'execute_command', input: {} }, sync: false, display: '$ make' });
    s = reduce(s, { type: 'tool-progress', threadId: 'root', callId: 'c', text: '[exit code: 2]', final: true });
    s = reduce(s, { type: 'tool-result', threadId: 'root', toolUseId: 'c', content: [], isError: false, subscription: true });
    expect(s.background).toEqual([]);
    expect(s.items.at(-1)).toMatchObject({ kind: 'tool', display: '$ make' });
  });

  it('a wait ended by new input did its job; another call ended by it was interrupted', () => {
    // The event says which calls are waits: a tool's name means nothing to the UI.
    let s = initialState(INFO);
    s = reduce(s, { type: 'tool-call', threadId: 'root', call: { id: 'w', name: 'nap', input: {} }, sync: false, display: 'Wait for events or input', passive: true });
    expect(s.running[0]).toMatchObject({ passive: true });
    s = reduce(s, { type: 'tool-interrupted', threadId: 'root', callId: 'w', reason: 'input', passive: true });
    s = reduce(s, { type: 'tool-call', threadId: 'root', call: { id: 'b', name: 'sleep', input: {} }, sync: false, display: '$ make' });
    s = reduce(s, { type: 'tool-interrupted', threadId: 'root', callId: 'b', reason: 'input' });
    expect(s.items.map((i) => i.kind === 'tool' && [i.display, i.status, i.summary])).toEqual([
      ['Wait for events or input', 'ok', 'woken by an event or a message'],
      ['$ make', 'interrupted', 'interrupted'],
    ]);
  });

  it("a child asleep on a wait says so in its row; one waiting on work says what it waits on", () => {
    let s = initialState(INFO);
    for (const [kid, task] of [['k1', 'Watch the build'], ['k2', 'Run the tests']] as const) {
      s = reduce(s, { type: 'thread-spawned', threadId: 'root', childId: kid, kind: 'child', spawnCallId: `sp-${kid}`, task });
      s = reduce(s, { type: 'slice-started', threadId: kid, inputs: 1 });
    }
    s = reduce(s, { type: 'tool-call', threadId: 'k1', call: { id: 'w', name: 'x', input: {} }, sync: false, display: 'Sleep 30 s', passive: true });
    s = reduce(s, { type: 'slice-finished', threadId: 'k1', outcome: 'awaiting-tool', usage: ZERO_USAGE, completions: 1, contextTokens: 0, waiting: 'passive' });
    s = reduce(s, { type: 'tool-call', threadId: 'k2', call: { id: 't', name: 'x', input: {} }, sync: false, display: '$ npm test' });
    s = reduce(s, { type: 'slice-finished', threadId: 'k2', outcome: 'awaiting-tool', usage: ZERO_USAGE, completions: 1, contextTokens: 0, waiting: 'active' });
    const f = frame(<ThreadRows threads={s.threads} animate={false} />);
    expect(f).toContain('Watch the build · asleep (Sleep 30 s)');
    expect(f).toContain('Run the tests · waiting on $ npm test');
  });

  it("renders a finished call from its tool's display data: title, summary, output and diff", () => {
    let s = initialState(INFO);
    s = reduce(s, { type: 'tool-call', threadId: 'root', call: { id: 'e', name: 'edit_file', input: {} }, sync: false, display: 'Edit a.ts (+1 -1)' });
    s = reduce(s, {
      type: 'tool-result',
      threadId: 'root',
      toolUseId: 'e',
      // What the model reads is not what the row shows.
      content: [{ type: 'text', text: 'The model reads this line.\nAnd this one.' }],
      isError: false,
      display: { title: 'Edit a.ts', summary: '+1 -1', diff: '--- a/a.ts\n+++ b/a.ts\n@@ -1 +1 @@\n-const a = 1;\n+const a = 2;' },
    });
    s = reduce(s, { type: 'tool-call', threadId: 'root', call: { id: 'c', name: 'execute_command', input: {} }, sync: false, display: '$ npm test' });
    s = reduce(s, { type: 'tool-result', threadId: 'root', toolUseId: 'c', content: [{ type: 'text', text: '> test\nok\n[exit code: 1]' }], isError: false, display: { summary: 'exit code 1', output: ['2 failed'] } });
    // A tool that gives nothing to show (a tool server's): the first line of its content.
    s = reduce(s, { type: 'tool-call', threadId: 'root', call: { id: 'm', name: 'mcp__search', input: {} }, sync: false });
    s = reduce(s, { type: 'tool-result', threadId: 'root', toolUseId: 'm', content: [{ type: 'text', text: 'three hits\na\nb' }], isError: false });
    const f = frame(<>{s.items.map((i) => <Entry key={i.id} item={i} />)}</>);
    expect(f).toMatch(/⏺ Edit a\.ts\n\s+⎿ \+1 -1\n\s+@@ -1 \+1 @@\n\s+-const a = 1;\n\s+\+const a = 2;/);
    expect(f).toMatch(/⏺ \$ npm test\n\s+⎿ exit code 1\n\s+2 failed/);
    expect(f).toMatch(/⏺ mcp__search \{\}\n\s+⎿ three hits \(\+2 lines\)/);
    expect(f).not.toContain('The model reads');
    expect(f).not.toContain('+++ b/a.ts');
  });

  it('prices usage per model, and says when it cannot', async () => {
    const usage = { input_tokens: 400, output_tokens: 1_000_000 };
    const known = await session(() => ({ text: 'hi', usage }), [], 'claude-haiku-5-5');
    await known.say('hello');
    await known.system.whenIdle();
    // Haiku 5.5 with a 400-token prompt: $0.10/M in, $0.50/M out.
    expect(known.state.status.cost).toBeCloseTo(0.50004, 9);
    expect(known.state.status.contextTokens).toBe(400);
    const unknown = await session(() => ({ text: 'hi', usage }), [], 'some-local-model');
    await unknown.say('hello');
    await unknown.system.whenIdle();
    expect(unknown.state.status.cost).toBeUndefined();
    expect(unknown.state.status.usage.output_tokens).toBe(1_000_000);
    await known.system.close();
    await unknown.system.close();
  });

  it('hides compaction helpers from the thread rows and notes the compaction', async () => {
    // The only child is the compaction's, which writes the summary.
    const s = await session((r) => (threadOf(r).stack.length > 1 ? { text: 'SUMMARY' } : { text: 'noted' }));
    await s.say('remember');
    await s.system.whenIdle();
    await s.system.compact('root');
    await s.system.whenIdle();
    expect(s.events.some((e) => e.type === 'thread-spawned' && e.kind === 'compaction')).toBe(true);
    expect(s.state.threads).toEqual([]);
    expect(s.state.items.filter((i) => i.kind === 'notice').map((i) => i.kind === 'notice' && i.level)).toEqual(['compaction', 'compaction']);
    await s.system.close();
  });

  it('starts over on a new session and keeps the model and effort switches in the status', () => {
    let s = initialState(INFO);
    s = reduce(s, { type: 'ui:submit', text: 'hello' });
    s = reduce(s, { type: 'ui:model', model: 'claude-opus-5-5', contextWindow: 500 });
    s = reduce(s, { type: 'ui:effort', effort: 'xhigh' });
    s = reduce(s, { type: 'ui:session', sessionId: 'abc', rootThreadId: 'abc' });
    expect(s).toMatchObject({ rootThreadId: 'abc', epoch: 1, status: { model: 'claude-opus-5-5', effort: 'xhigh', contextWindow: 500, sessionId: 'abc' } });
    expect(s.items).toEqual([{ kind: 'notice', level: 'info', text: 'New session abc.', id: 4 }]);
    s = reduce(s, { type: 'ui:effort', effort: undefined });
    expect(s.status).not.toHaveProperty('effort');
  });
});

describe("the model's notes (thinking between tool calls)", () => {
  const echo: AsyncTool = {
    kind: 'async',
    name: 'echo',
    description: 'echo',
    input_schema: { type: 'object', properties: {} },
    dispatch(_input, ctx) {
      setImmediate(() => void ctx.respond({ content: 'ok' }));
    },
  };
  const notes = Array.from({ length: 7 }, (_, i) => `note line ${i + 1}`).join('\n');

  it('become dimmed items before the call they lead to, folded after a few lines; an empty block leaves none', async () => {
    const s = await session(
      (r) => (r.messages.length === 1 ? { thinking: notes, toolCall: { name: 'echo', input: {} } } : { thinking: '', text: 'Done.' }),
      [echo],
    );
    await s.say('go');
    await s.system.whenIdle();
    const kinds = s.state.items.map((i) => i.kind);
    expect(kinds).toEqual(['user', 'thinking', 'tool', 'assistant']);
    const item = s.state.items[1];
    expect(item).toMatchObject({ kind: 'thinking', text: notes });
    const shown = frame(<Entry item={item} />);
    expect(shown).toContain('✻ note line 1');
    expect(shown).toContain('note line 4');
    expect(shown).not.toContain('note line 5');
    expect(shown).toContain('… 3 more lines of notes (/notes unfolds them)');
    expect(s.state.liveThinking).toBeNull();
    await s.system.close();
  });

  it('/notes unfolds them: the latest again in full, and the next ones whole', async () => {
    const s = await session((r) => (r.messages.length === 1 ? { thinking: notes, toolCall: { name: 'echo', input: {} } } : { thinking: notes, text: 'Done.' }), [echo]);
    await s.say('go');
    await s.system.whenIdle();
    s.act({ type: 'ui:notes' });
    const again = s.state.items.at(-1)!;
    expect(again).toMatchObject({ kind: 'thinking', full: true });
    expect(frame(<Entry item={again} />)).toContain('note line 7');
    await s.say('again');
    await s.system.whenIdle();
    const latest = s.state.items.filter((i) => i.kind === 'thinking').at(-1)!;
    expect(latest).toMatchObject({ full: true });
    s.act({ type: 'ui:notes' });
    expect(s.state.notesFull).toBe(false);
    await s.system.close();
  });

  it('while a block streams: its latest lines live, or "Thinking…" while it has none', () => {
    let s = initialState(INFO);
    s = reduce(s, { type: 'thinking-delta', threadId: 'root', text: '' });
    expect(s.liveThinking).toBe('');
    s = reduce(s, { type: 'thinking-delta', threadId: 'root', text: 'Looking at the parser.' });
    expect(s.liveThinking).toBe('Looking at the parser.');
    // The text of the answer ends the block: its notes join the transcript first.
    s = reduce(s, { type: 'text-delta', threadId: 'root', text: 'The answer' });
    expect(s.items.at(-1)).toMatchObject({ kind: 'thinking', text: 'Looking at the parser.' });
    expect(s.liveThinking).toBeNull();
    expect(s.liveText).toBe('The answer');
  });
});

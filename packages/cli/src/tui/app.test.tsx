import { afterEach, describe, expect, it } from 'vitest';
import type { CompletionRequest, ScriptedReply } from '@infinity-code/runtime';
import { heldStream, heldTool, requestText, startRig, threadOf, type Rig } from './testing.js';

let rig: Rig | undefined;
afterEach(async () => {
  await rig?.close();
  rig = undefined;
});

const lastUserText = (r: CompletionRequest) => {
  const last = r.messages[r.messages.length - 1];
  return last?.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('') ?? '';
};

describe('the TUI over a real LocalSystem', () => {
  it('sends what is typed on Enter, streams the answer into the transcript and sums usage in the status line', async () => {
    const seen: string[] = [];
    rig = await startRig({
      brain: (r) => {
        seen.push(requestText(r.messages));
        return { text: 'Hello! I can help with that.', usage: { input_tokens: 100_000, output_tokens: 10_000 } };
      },
    });
    expect(rig.frame()).toContain('Ask for a change, or /help');
    await rig.press('h', 'i', ' ', 't', 'h', 'e', 'r', 'e');
    expect(rig.frame()).toContain('› hi there');
    await rig.press('\r');
    await rig.settle();
    expect(seen[0]).toContain('hi there');
    const f = rig.frame();
    expect(f).toMatch(/› hi there[\s\S]*● Hello! I can help with that\./);
    // The default model, Sonnet 5.5: $2/M in and $10/M out: 0.20 + 0.10.
    expect(f).toContain('claude-sonnet-5-5 · ↑100k ↓10k · $0.30 · ctx 50% · sandbox overlay · session root');
    expect(f).not.toContain('Thinking');
  });

  it('shows a running tool row with a spinner line, then its result summary when the async result arrives', async () => {
    const tests = heldTool();
    rig = await startRig({
      tools: [tests],
      brain: (r) =>
        requestText(r.messages).includes('12 passed')
          ? { text: 'All green.' }
          : { text: 'Running the tests.', toolCall: { name: 'run_tests', input: {} } },
    });
    await rig.submit('run the tests');
    await rig.settle({ ignoreRunningTools: true });
    let f = rig.frame();
    expect(f).toMatch(/● Running the tests\.[\s\S]*\$ npm test\n\s+⎿ running…/);

    await rig.run(() => tests.answer('12 passed\n0 failed'));
    await rig.settle();
    f = rig.frame();
    expect(f).toMatch(/⏺ \$ npm test\n\s+⎿ 12 passed \(\+1 lines\)[\s\S]*● All green\./);
    expect(f).not.toContain('running…');
  });

  it('marks a failed tool call as an error row', async () => {
    let n = 0;
    rig = await startRig({
      brain: () => (n++ === 0 ? { toolCall: { name: 'no_such_tool', input: { x: 1 } } } : { text: 'That tool does not exist.' }),
    });
    await rig.submit('try it');
    await rig.settle();
    expect(rig.frame()).toMatch(/⏺ no_such_tool \{"x":1\}\n\s+⎿ Error: tool 'no_such_tool' does not exist/);
    expect(rig.store.getState().items.find((i) => i.kind === 'tool')).toMatchObject({ status: 'error' });
  });

  it('discards streamed text when the completion is retried, and says so', async () => {
    let n = 0;
    rig = await startRig({
      brain: (): ScriptedReply => (n++ === 0 ? { text: 'GARBLED one two', chunks: 2, cutAfterChunks: 1 } : { text: 'Clean answer.' }),
    });
    await rig.submit('hello');
    await rig.settle();
    const f = rig.frame();
    expect(f).toMatch(/↻ .*Retrying in .*\(attempt 1\)/);
    expect(f).toContain('● Clean answer.');
    expect(f).not.toContain('GARBLED');
  });

  it('streams text in the live region while the completion runs', async () => {
    const { stream, release } = heldStream('First part. ', 'Second part.');
    rig = await startRig({ brain: () => ({ textStream: stream }) });
    await rig.submit('go');
    await rig.until((e) => e.type === 'text-delta');
    expect(rig.frame()).toMatch(/● First part\.\s*\n.*Writing… \(Esc to stop\)/);
    await rig.run(async () => {
      release();
      await rig!.system.whenIdle();
    });
    expect(rig.frame()).toContain('● First part. Second part.');
    expect(rig.frame()).not.toContain('Writing…');
  });

  it('keeps multi-line input: Alt+Enter and a trailing backslash add lines, Enter sends them all', async () => {
    const seen: string[] = [];
    rig = await startRig({ brain: (r) => (seen.push(lastUserText(r)), { text: 'ok' }) });
    await rig.press('one', '\u001b\r', 'two\\', '\r', 'three');
    expect(rig.frame()).toMatch(/│ › one\s+│\n│\s+two\s+│\n│\s+three\s+│/);
    await rig.press('\r');
    await rig.settle();
    expect(seen).toEqual(['one\ntwo\nthree']);
  });

  it('sends a line typed together with its Enter (a script, a pasted line) but keeps a pasted block', async () => {
    const seen: string[] = [];
    rig = await startRig({ brain: (r) => (seen.push(lastUserText(r)), { text: 'ok' }) });
    await rig.press('run it\r');
    await rig.settle();
    await rig.press('line one\rline two\r');
    expect(rig.frame()).toMatch(/│ › line one\s+│\n│\s+line two\s+│/);
    expect(seen).toEqual(['run it']);
  });

  it('recalls sent messages with the up arrow', async () => {
    rig = await startRig({ brain: () => ({ text: 'ok' }) });
    await rig.submit('first message');
    await rig.settle();
    await rig.press('\u001b[A');
    expect(rig.frame()).toMatch(/╭.*\n│ › first message/);
  });
});

describe('slash commands', () => {
  it('completes a command with Tab, and /compact asks the controller to compact', async () => {
    rig = await startRig({
      // The only child is the compaction's, which writes the summary.
      brain: (r) => (threadOf(r).stack.length > 1 ? { text: 'SUMMARY of the talk' } : { text: 'noted' }),
    });
    await rig.submit('remember this');
    await rig.settle();
    await rig.press('/comp', '\t');
    expect(rig.frame()).toContain('› /compact');
    await rig.press('\r');
    await rig.settle();
    const f = rig.frame();
    expect(f).toContain('≡ Compacting the conversation');
    expect(f).toContain('≡ Conversation compacted');
    expect(rig.events.some((e) => e.type === 'compaction-applied' && e.threadId === 'root')).toBe(true);
  });

  it('lists the candidates when Tab is ambiguous, and rejects unknown commands clearly', async () => {
    rig = await startRig({ brain: () => ({ text: 'ok' }) });
    await rig.press('/s', '\t');
    expect(rig.frame()).toContain('/sessions  /stop');
    await rig.press('\u0015'); // Ctrl+U clears the line
    await rig.submit('/compcat');
    expect(rig.frame()).toContain('✗ Unknown command /compcat. Type /help for the list.');
    await rig.submit('/sto');
    expect(rig.frame()).toContain('Did you mean /stop?');
    expect(rig.events.filter((e) => e.type === 'input-accepted')).toHaveLength(0);
  });

  it('/help, /stop, /sessions and /model call the controller and report back', async () => {
    const models: string[] = [];
    rig = await startRig({
      brain: () => ({ text: 'ok' }),
      hooks: {
        setModel: async (id) => {
          models.push(id);
          return { contextWindow: 1_000_000 };
        },
        listSessions: async () => [
          { id: 'root', title: 'fix the parser' },
          { id: 'older-session-id', title: 'add docs', updatedAt: Date.UTC(2026, 0, 2, 3, 4) },
        ],
      },
    });
    await rig.submit('/help');
    expect(rig.frame()).toMatch(/\/compact\s+summarise the conversation/);
    await rig.submit('/stop');
    expect(rig.frame()).toContain('Nothing is running.');
    await rig.submit('/sessions');
    expect(rig.frame()).toMatch(/\* root\s+fix the parser\n\s+older-se\s+2026-01-02 03:04\s+add docs/);
    await rig.submit('/model claude-opus-5-5');
    expect(models).toEqual(['claude-opus-5-5']);
    expect(rig.frame()).toContain('claude-opus-5-5 · ↑0 ↓0');
    await rig.submit('/model');
    expect(rig.frame()).toContain('Model: claude-opus-5-5 (Claude Opus 5.5). Switch with /model <alias|id>.');
    expect(rig.frame()).toMatch(/\* claude-opus-5-5\s+opus\s+Claude Opus 5\.5\s+\$4 in \/ \$20 out/);
  });

  it('/model takes an alias and refuses a retired model; /effort sets the effort of the next completions', async () => {
    const seen: Array<{ model: string; effort: string | undefined }> = [];
    const now: { model: string; effort?: 'low' | 'medium' | 'high' | 'xhigh' | 'max' } = { model: 'claude-sonnet-5-5' };
    rig = await startRig({
      brain: (r) => (seen.push({ model: r.model, effort: r.effort }), { text: 'ok' }),
      model: now.model,
      // Read per completion, as the CLI's session does.
      system: { model: () => now.model, effort: () => now.effort },
      hooks: {
        setModel: async (id) => void (now.model = id),
        setEffort: async (effort) => void (effort === undefined ? delete now.effort : (now.effort = effort)),
      },
    });
    const said = () => rig!.store.getState().items.flatMap((i) => (i.kind === 'notice' ? [`${i.level}: ${i.text}`] : []));
    await rig.submit('/effort');
    expect(said().at(-1)).toBe(
      "info: Effort: the model's default, high (none is sent). claude-sonnet-5-5 accepts low, medium, high, xhigh, max; its default is high. " +
        "Set it with /effort <level>, or /effort default for the model's own.",
    );
    await rig.submit('/effort low');
    expect(said().at(-1)).toBe('info: Effort set to low.');
    await rig.submit('/effort turbo');
    expect(said().at(-1)).toMatch(/^error: Unknown effort level "turbo"\. Levels: low, medium, high, xhigh, max/);
    await rig.submit('first');
    await rig.settle();
    expect(seen.at(-1)).toEqual({ model: 'claude-sonnet-5-5', effort: 'low' });

    await rig.submit('/model claude-sonnet-4-5');
    expect(said().at(-1)).toBe(
      'error: /model claude-sonnet-4-5 names Claude Sonnet 4.5, retired on 2026-11-30: requests to it fail. Its replacement is ' +
        'claude-sonnet-5-5 (Claude Sonnet 5.5): switch with /model claude-sonnet-5-5 (or /model sonnet). The model is still claude-sonnet-5-5.',
    );
    expect(now.model).toBe('claude-sonnet-5-5');
    await rig.submit('/model opus');
    expect(now.model).toBe('claude-opus-5-5');
    expect(rig.frame()).toContain('claude-opus-5-5 · ');
    await rig.submit('second');
    await rig.settle();
    expect(seen.at(-1)).toEqual({ model: 'claude-opus-5-5', effort: 'low' });

    // A model that takes no effort level: the level goes, so its requests don't fail.
    await rig.submit('/model claude-opus-4-8');
    expect(said().slice(-3)).toEqual([
      'info: Model set to claude-opus-4-8.',
      'info: claude-opus-4-8 does not accept effort low: it accepts no effort level.',
      "info: Effort set to the model's default.",
    ]);
    await rig.submit('/effort max');
    expect(said().at(-1)).toBe(
      "error: claude-opus-4-8 does not accept effort max: it accepts no effort level. The effort is still the model's default.",
    );
    await rig.submit('third');
    await rig.settle();
    expect(seen.at(-1)).toEqual({ model: 'claude-opus-4-8', effort: undefined });
  });

  it('/new starts a fresh session on a new root thread', async () => {
    const threads: string[] = [];
    rig = await startRig({ brain: (r) => (threads.push(threadOf(r).id), { text: `reply ${threads.length}` }) });
    await rig.submit('old task');
    await rig.settle();
    await rig.submit('/new');
    const f = rig.frame();
    expect(f).toMatch(/ℹ New session th_[0-9a-z]{13}\./);
    await rig.submit('new task');
    await rig.settle();
    expect(threads).toHaveLength(2);
    expect(threads[1]).not.toBe('root');
    expect(rig.store.getState().items.map((i) => i.kind)).toEqual(['notice', 'user', 'assistant']);
  });
});

describe('Ctrl+C', () => {
  it('stops the running completion on the first press and quits on the second', async () => {
    let quits = 0;
    const { stream, release } = heldStream('Working on it', ' and more');
    rig = await startRig({
      brain: () => ({ textStream: stream }),
      hooks: {
        quit: async () => {
          quits++;
          return {};
        },
      },
    });
    await rig.submit('long task');
    await rig.until((e) => e.type === 'text-delta');
    await rig.press('\u0003');
    await rig.run(async () => {
      release();
      await rig!.system.whenIdle();
    });
    expect(rig.events.find((e) => e.type === 'slice-finished')).toMatchObject({ outcome: 'interrupted' });
    expect(rig.frame()).toContain('Press Ctrl+C again to quit.');
    expect(rig.frame()).toContain('● Working on it');
    expect(quits).toBe(0);
    await rig.press('\u0003');
    expect(quits).toBe(1);
  });
});

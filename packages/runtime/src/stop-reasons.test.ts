// What a slice does with each stop_reason of a reply, in both modes over both stores: the
// model's decisions are scripted; history, events and the requests the model got are real.
import { describe, expect, it } from 'vitest';
import type { RuntimeEvent } from './events.js';
import { userText } from './input.js';
import type { HistoryMessage } from './messages.js';
import type { CompletionRequest } from './provider.js';
import type { ScriptedReply } from './scripted-provider.js';
import { lastText, makeHarness, shape, type Mode, type StoreKind } from './test-support/harness.js';
import { echoTool } from './test-support/tools.js';
import { STOP_PHRASES } from './wording.js';

const cases: Array<[Mode, StoreKind]> = [
  ['local', 'memory'],
  ['local', 'sqlite'],
  ['step', 'memory'],
  ['step', 'sqlite'],
];

const ofType = <T extends RuntimeEvent['type']>(events: RuntimeEvent[], type: T) =>
  events.filter((e): e is Extract<RuntimeEvent, { type: T }> => e.type === type);

const thinkingOf = (m: HistoryMessage) => m.content.filter((b) => b.type === 'thinking');

describe.each(cases)('stop reasons in %s mode with the %s store', (mode, storeKind) => {
  it('keeps each thinking block of a tool loop as it came and sends it back in every later request', async () => {
    const requests: CompletionRequest[] = [];
    const brain = (r: CompletionRequest): ScriptedReply => {
      requests.push(structuredClone(r));
      const results = r.messages.flatMap((m) => m.content).filter((b) => b.type === 'tool_result').length;
      if (results === 0) return { thinking: 'Let me echo twice.', toolCalls: [{ name: 'echo', input: { text: 'a' } }, { name: 'echo', input: { text: 'b' } }] };
      if (results === 2) return { thinking: '', toolCall: { name: 'echo', input: { text: 'c' } } };
      return { thinking: 'All echoed.', text: 'Done.' };
    };
    const h = makeHarness(mode, storeKind, { brain, tools: [echoTool()] });
    await h.send(userText('t', 'echo please', 'u1'));
    await h.settle();
    const { history } = (await h.store.loadThread('t'))!;
    expect(shape(history)).toEqual([
      'user:text',
      'assistant:thinking+tool_use+tool_use',
      'user:tool_result+tool_result',
      'assistant:thinking+tool_use',
      'user:tool_result',
      'assistant:thinking+text',
    ]);
    expect(history[1].content[0]).toEqual({ type: 'thinking', thinking: 'Let me echo twice.', signature: 'scripted:18' });
    expect(history[3].content[0]).toEqual({ type: 'thinking', thinking: '', signature: 'scripted:0' });
    // Each later request carries every earlier assistant turn exactly as stored.
    expect(requests).toHaveLength(3);
    expect(requests[1].messages[1]).toEqual(history[1]);
    expect(requests[2].messages[1]).toEqual(history[1]);
    expect(requests[2].messages[3]).toEqual(history[3]);
    // The notes reached observers as they streamed, and the whole reply with the finished event.
    expect(ofType(h.events, 'thinking-delta').map((e) => e.text).join('')).toBe('Let me echo twice.All echoed.');
    const finished = ofType(h.events, 'completion-finished');
    expect(finished.map((e) => e.stopReason)).toEqual(['tool_use', 'tool_use', 'end_turn']);
    expect(finished[2].content).toEqual(history[5].content);
    await h.close();
  });

  it('never runs a call the output limit cut, and tells the model to split it', async () => {
    const echo = echoTool();
    const brain = (r: CompletionRequest): ScriptedReply => {
      const last = lastText(r);
      if (last.includes('output limit')) return { text: 'I will write it in parts.' };
      if (r.messages.length > 1) return { text: 'unexpected' };
      return {
        thinking: '',
        toolCall: { name: 'echo', input: { text: 'short' } },
        toolCalls: [{ name: 'echo', input: { text: 'a very long file that was cut' } }],
        stopReason: 'max_tokens',
      };
    };
    const h = makeHarness(mode, storeKind, { brain, tools: [echo], system: { maxTokens: 4000 } });
    await h.send(userText('t', 'write a big file', 'u1'));
    await h.settle();
    const { history } = (await h.store.loadThread('t'))!;
    expect(shape(history)).toEqual(['user:text', 'assistant:thinking+tool_use+tool_use', 'user:tool_result+tool_result', 'assistant:text']);
    // The first, complete call ran; the last one, cut, never did.
    expect(echo.log).toHaveLength(1);
    const results = history[2].content.filter((b) => b.type === 'tool_result');
    expect(results[0]).not.toHaveProperty('is_error');
    expect(results[1]).toMatchObject({ is_error: true });
    expect(JSON.stringify(results[1])).toContain('output limit (4000 tokens)');
    expect(JSON.stringify(results[1])).toContain('split');
    await h.close();
  });

  it('runs every call of a reply the output limit cut in the text after them: the calls are whole', async () => {
    const echo = echoTool();
    const brain = (r: CompletionRequest): ScriptedReply =>
      r.messages.length > 1 ? { text: 'Both echoed.' } : { toolCalls: [{ name: 'echo', input: { text: 'a' } }, { name: 'echo', input: { text: 'b' } }], textAfter: 'And then I', stopReason: 'max_tokens' };
    const h = makeHarness(mode, storeKind, { brain, tools: [echo] });
    await h.send(userText('t', 'echo both', 'u1'));
    await h.settle();
    expect(echo.log).toHaveLength(2);
    await h.close();
  });

  it('goes on with a text answer the output limit cut, as one answer', async () => {
    let calls = 0;
    const brain = (r: CompletionRequest): ScriptedReply => {
      calls++;
      if (lastText(r) === STOP_PHRASES.replyCut) return { text: 'second half.' };
      return { text: 'First half, ', stopReason: 'max_tokens' };
    };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('t', 'explain', 'u1'));
    await h.settle();
    const { history } = (await h.store.loadThread('t'))!;
    expect(calls).toBe(2);
    expect(shape(history)).toEqual(['user:text', 'assistant:text', 'user:text', 'assistant:text']);
    const started = ofType(h.events, 'completion-started');
    expect(started.map((e) => e.continues === true)).toEqual([false, true]);
    expect(ofType(h.events, 'slice-finished').at(-1)?.outcome).toBe('completed');
    await h.close();
  });

  it('stops a thread whose reply was refused, with the category and explanation', async () => {
    let calls = 0;
    const brain = (): ScriptedReply => {
      calls++;
      return {
        thinking: '',
        text: 'I can’t help with that.',
        toolCall: { name: 'echo', input: { text: 'x' } },
        stopReason: 'refusal',
        stopDetails: { category: 'cyber', explanation: 'The request asks for malware.' },
      };
    };
    const echo = echoTool();
    const h = makeHarness(mode, storeKind, { brain, tools: [echo] });
    await h.send(userText('t', 'do it', 'u1'));
    await h.settle();
    expect(calls).toBe(1);
    expect(echo.log).toHaveLength(0);
    const [error] = ofType(h.events, 'error');
    expect(error).toMatchObject({ kind: 'refusal' });
    expect(error.message).toContain('category: cyber');
    expect(error.message).toContain('The request asks for malware.');
    expect(ofType(h.events, 'slice-finished').at(-1)?.outcome).toBe('failed');
    // The refused reply's call is not left in history without a result.
    const { history } = (await h.store.loadThread('t'))!;
    expect(shape(history)).toEqual(['user:text', 'assistant:thinking+text']);
    await h.close();
  });

  it('sends a paused turn back as it is, and the model carries on with it', async () => {
    const seen: string[] = [];
    const brain = (r: CompletionRequest): ScriptedReply => {
      const last = r.messages.at(-1)!;
      seen.push(last.role);
      return last.role === 'user' ? { thinking: 'Searching.', text: 'Looking…', stopReason: 'pause_turn' } : { text: 'Found it.' };
    };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('t', 'find it', 'u1'));
    await h.settle();
    expect(seen).toEqual(['user', 'assistant']);
    const { history } = (await h.store.loadThread('t'))!;
    expect(shape(history)).toEqual(['user:text', 'assistant:thinking+text', 'assistant:text']);
    expect(thinkingOf(history[1])).toHaveLength(1);
    await h.close();
  });

  it('compacts a thread whose context filled up mid-answer, then goes on', async () => {
    const brain = (r: CompletionRequest): ScriptedReply => {
      const last = lastText(r);
      if (last.includes('compaction thread')) return { text: 'We were writing the report.' };
      if (last.endsWith(STOP_PHRASES.contextFull)) return { text: 'Report, continued.' };
      return { thinking: 'Writing.', text: 'Report, part one', stopReason: 'model_context_window_exceeded' };
    };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('t', 'write the report', 'u1'));
    await h.settle();
    expect(ofType(h.events, 'compaction-started')).toHaveLength(1);
    expect(ofType(h.events, 'compaction-applied')).toHaveLength(1);
    const { history } = (await h.store.loadThread('t'))!;
    // The view: the summary, the cut turn kept without the thinking the summary's prefix
    // replaced, the request to go on, and the answer made after the switch.
    expect(lastText({ messages: history.slice(0, 1) })).toContain('We were writing the report.');
    expect(history.at(-1)).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Report, continued.' }] });
    expect(history.flatMap((m) => m.content).some((b) => b.type === 'thinking')).toBe(false);
    await h.close();
  });

  it('stops a thread whose context is full again right after its compaction', async () => {
    let replies = 0;
    const brain = (r: CompletionRequest): ScriptedReply => {
      if (lastText(r).includes('compaction thread')) return { text: 'Summary.' };
      replies++;
      return { text: 'Still too long', stopReason: 'model_context_window_exceeded' };
    };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('t', 'go', 'u1'));
    await h.settle();
    expect(replies).toBe(2);
    expect(ofType(h.events, 'compaction-started')).toHaveLength(1);
    expect(ofType(h.events, 'error').at(-1)?.message).toContain('filled up again');
    await h.close();
  });

  it('keeps thinking made after a summary applies, and drops what the summary left bound to the old prefix', async () => {
    const brain = (r: CompletionRequest): ScriptedReply => {
      const last = lastText(r);
      if (last.includes('compaction thread')) return { text: 'Earlier: setup.' };
      return { thinking: `note for ${last.slice(-5)}`, text: `ok ${last.slice(-5)}` };
    };
    const h = makeHarness(mode, storeKind, { brain });
    await h.send(userText('t', 'one 1', 'u1'));
    await h.settle();
    // In the slice that starts the compaction, the thread answers on: that turn's thinking is
    // bound to the view the summary replaces.
    await h.send({ id: 'c1', threadId: 't', body: { kind: 'compaction' } }, userText('t', 'two 2', 'u2'));
    await h.settle();
    expect(ofType(h.events, 'compaction-applied')).toHaveLength(1);
    await h.send(userText('t', 'three 3', 'u3'));
    await h.settle();
    const { history } = (await h.store.loadThread('t'))!;
    expect(shape(history)).toEqual(['user:text', 'user:text', 'assistant:text', 'user:text', 'assistant:thinking+text']);
    expect(history[2].content).toEqual([{ type: 'text', text: 'ok two 2' }]);
    expect(history[4].content[0]).toEqual({ type: 'thinking', thinking: 'note for ree 3', signature: 'scripted:14' });
    // Stored, nothing was lost: the kept turn still has its thinking.
    const stored = ofType(h.events, 'completion-finished').find((e) => (e.content ?? []).some((b) => b.type === 'text' && b.text === 'ok two 2'));
    expect(stored?.content?.[0]).toMatchObject({ type: 'thinking', thinking: 'note for two 2' });
    await h.close();
  });
});

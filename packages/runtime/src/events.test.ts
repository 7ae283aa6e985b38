import { describe, expect, it } from 'vitest';
import { userText } from './input.js';
import { WOKEN_BY_INPUT } from './wording.js';
import type { CompletionRequest } from './provider.js';
import type { ScriptedReply } from './scripted-provider.js';
import { lastText, makeHarness, shape, threadOf, toolUses, type Mode, type StoreKind } from './test-support/harness.js';
import { backgroundTool, heldTool, watchTool } from './test-support/tools.js';

const combos: Array<[Mode, StoreKind]> = [
  ['local', 'memory'],
  ['local', 'sqlite'],
  ['step', 'memory'],
  ['step', 'sqlite'],
];

/** Subscribes on "watch", starts a slow job on "hold", sleeps on "wait"; otherwise acknowledges. */
function scriptBrain(r: CompletionRequest): ScriptedReply {
  const t = lastText(r);
  if (t === 'watch') return { text: 'Subscribing.', toolCall: { name: 'watch', input: { what: 'builds' } } };
  if (t === 'hold') return { text: 'Starting a job.', toolCall: { name: 'hold', input: {} } };
  if (t === 'wait') return { toolCall: { name: 'sleep_until_event_or_input', input: {} } };
  if (t.startsWith('cancel ')) return { toolCall: { name: 'cancel_subscription', input: { tool_call_id: t.slice(7) } } };
  return { text: `ack: ${t.slice(0, 40)}` };
}

describe.each(combos)('events in %s mode with the %s store', (mode, storeKind) => {
  it('inlines associative events as receive_event__injected calls, and a final event ends the subscription', async () => {
    const watch = watchTool();
    const h = makeHarness(mode, storeKind, { brain: scriptBrain, tools: [watch] });
    await h.send(userText('t', 'watch', 'u1'));
    await h.settle();
    const [callId, ctx] = [...watch.ctxs][0];
    let t = await h.store.loadThread('t');
    expect(t!.record.subscriptions.map((s) => s.callId)).toEqual([callId]);

    await ctx.emit({ content: 'build 1 passed', associative: true, id: 'e1' });
    await h.settle();
    await ctx.emit({ content: 'build 2 failed', associative: true, final: true, id: 'e2' });
    await h.settle();
    await ctx.emit({ content: 'too late', associative: true, id: 'e3' });
    await h.settle();

    t = await h.store.loadThread('t');
    const injected = toolUses(t!.history).filter((u) => u.name === 'receive_event__injected');
    expect(injected.map((u) => u.input)).toEqual([
      { original_tool_name: 'watch', original_tool_call_id: callId, original_args: { what: 'builds' } },
      { original_tool_name: 'watch', original_tool_call_id: callId, original_args: { what: 'builds' } },
    ]);
    expect(JSON.stringify(t!.history)).not.toContain('too late');
    expect(t!.record.subscriptions).toEqual([]);
    expect(h.events.some((e) => e.type === 'input-dropped' && e.reason === 'inactive')).toBe(true);
    // The model answered each event.
    expect(shape(t!.history).slice(-2)).toEqual(['user:tool_result', 'assistant:text']);
    await h.close();
  });

  it('hands a threaded event to an ephemeral child; the parent only sees what the child reports', async () => {
    const watch = watchTool();
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length === 1) return scriptBrain(r);
      const t = lastText(r);
      if (t.includes('important')) return { toolCall: { name: 'report_to_parent', input: { report: 'an important event happened' } } };
      return { text: 'nothing to report' };
    };
    const h = makeHarness(mode, storeKind, { brain, tools: [watch] });
    await h.send(userText('t', 'watch', 'u1'));
    await h.settle();
    const [callId, ctx] = [...watch.ctxs][0];
    const before = (await h.store.loadThread('t'))!.history.length;

    await ctx.emit({ content: 'routine event', id: 'e1' });
    await h.settle();
    expect((await h.store.loadThread('t'))!.history).toHaveLength(before);
    const children = h.events.flatMap((e) => (e.type === 'thread-spawned' ? [e] : []));
    expect(children).toHaveLength(1);
    expect(children[0]).toMatchObject({ kind: 'event', spawnCallId: callId });
    const child = await h.store.loadThread(children[0].childId);
    expect(child!.record.status).toBe('closed');
    // The child saw the parent's history, then the spawn seed, then the event.
    expect(shape(child!.history).slice(0, before)).toEqual(shape((await h.store.loadThread('t'))!.history));
    expect(JSON.stringify(child!.history.at(-2))).toContain('routine event');

    await ctx.emit({ content: 'important event', id: 'e2' });
    await ctx.emit({ content: 'important event', id: 'e2' }); // delivered twice: one child only
    await h.settle();
    expect(h.events.filter((e) => e.type === 'thread-spawned')).toHaveLength(2);
    const t = await h.store.loadThread('t');
    const injected = toolUses(t!.history).filter((u) => u.name === 'receive_event__injected');
    expect(injected).toHaveLength(1);
    expect(injected[0].input.original_tool_call_id).toBe(callId);
    expect(JSON.stringify(t!.history)).toContain('an important event happened');
    await h.close();
  });

  it('defers events behind an active call and delivers them after its result, in order', async () => {
    const watch = watchTool();
    const hold = heldTool();
    const h = makeHarness(mode, storeKind, { brain: scriptBrain, tools: [watch, hold] });
    await h.send(userText('t', 'watch', 'u1'));
    await h.settle();
    const ctx = [...watch.ctxs.values()][0];
    await h.send(userText('t', 'hold', 'u2'));
    await h.settleSlices();
    for (const n of [1, 2, 3]) await ctx.emit({ content: `event ${n}`, associative: true, id: `e${n}` });
    await h.settleSlices();
    let t = await h.store.loadThread('t');
    expect(JSON.stringify(t!.history)).not.toContain('event 1');
    expect(t!.record.hasDeferred).toBe(true);
    expect(h.events.some((e) => e.type === 'input-deferred')).toBe(true);

    const respond = [...hold.held.values()][0];
    await respond('job done');
    await h.settle();
    t = await h.store.loadThread('t');
    const texts = t!.history.map((m) => JSON.stringify(m));
    const at = (s: string) => texts.findIndex((x) => x.includes(s));
    expect(at('job done')).toBeGreaterThan(0);
    expect(at('event 1')).toBeGreaterThan(at('job done'));
    // The three events of one subscription arrive together: one injected call, in their order.
    const events = texts[at('event 1')];
    expect(events.indexOf('event 2')).toBeGreaterThan(events.indexOf('event 1'));
    expect(events.indexOf('event 3')).toBeGreaterThan(events.indexOf('event 2'));
    expect(toolUses(t!.history).filter((u) => u.name === 'receive_event__injected')).toHaveLength(1);
    expect(t!.record.hasDeferred).toBe(false);
    expect(hold.cancelled).toHaveLength(0);
    await h.close();
  });

  it('ends a passive wait when an event arrives, without calling it an interruption', async () => {
    const watch = watchTool();
    const h = makeHarness(mode, storeKind, { brain: scriptBrain, tools: [watch] });
    await h.send(userText('t', 'watch', 'u1'));
    await h.settle();
    const ctx = [...watch.ctxs.values()][0];
    await h.send(userText('t', 'wait', 'u2'));
    await h.settleSlices();
    await ctx.emit({ content: 'wake up', associative: true, id: 'e1' });
    await h.settleSlices();
    const t = await h.store.loadThread('t');
    const texts = t!.history.map((m) => JSON.stringify(m));
    const woke = texts.findIndex((x) => x.includes(WOKEN_BY_INPUT));
    expect(woke).toBeGreaterThan(0);
    expect(texts.findIndex((x) => x.includes('wake up'))).toBeGreaterThan(woke);
    expect(t!.record.batch).toEqual([]);
    await h.close();
  });

  it('lets only the owner cancel a subscription, tells the tool, and drops later events', async () => {
    const watch = watchTool();
    const h = makeHarness(mode, storeKind, { brain: scriptBrain, tools: [watch] });
    await h.send(userText('a', 'watch', 'u1'));
    await h.settle();
    const [callId, ctx] = [...watch.ctxs][0];
    await h.send(userText('b', `cancel ${callId}`, 'u2'));
    await h.settle();
    expect(JSON.stringify((await h.store.loadThread('b'))!.history)).toContain('no active subscription found');
    expect(watch.cancelled).toEqual([]);
    await h.send(userText('a', `cancel ${callId}`, 'u3'));
    await h.settle();
    expect(watch.cancelled).toEqual([callId]);
    expect((await h.store.loadThread('a'))!.record.subscriptions).toEqual([]);
    await ctx.emit({ content: 'after cancel', associative: true, id: 'late' });
    await h.settle();
    expect(JSON.stringify((await h.store.loadThread('a'))!.history)).not.toContain('after cancel');
    await h.close();
  });

  it('keeps quiet events out of history until something wakes the thread, then folds them in order as one call', async () => {
    const watch = watchTool();
    const h = makeHarness(mode, storeKind, { brain: scriptBrain, tools: [watch] });
    await h.send(userText('t', 'watch', 'u1'));
    await h.settle();
    const [callId, ctx] = [...watch.ctxs][0];
    const completions = () => h.events.filter((e) => e.type === 'completion-started').length;
    const before = completions();

    await ctx.emit({ content: 'line 1', associative: true, quiet: true, id: 'q1' });
    await h.settleSlices();
    await ctx.emit({ content: 'line 2', associative: true, quiet: true, id: 'q2' });
    await h.settleSlices();
    let t = await h.store.loadThread('t');
    expect(completions()).toBe(before);
    expect(JSON.stringify(t!.history)).not.toContain('line 1');
    expect(t!.record.hasDeferred).toBe(true);

    await ctx.emit({ content: 'exit code 0', associative: true, final: true, id: 'q3' });
    await h.settle();
    t = await h.store.loadThread('t');
    expect(completions()).toBe(before + 1);
    const injected = toolUses(t!.history).filter((u) => u.name === 'receive_event__injected');
    expect(injected).toHaveLength(1);
    expect(injected[0].input).toMatchObject({ original_tool_call_id: callId });
    const all = JSON.stringify(t!.history);
    expect(all.indexOf('line 1')).toBeLessThan(all.indexOf('line 2'));
    expect(all.indexOf('line 2')).toBeLessThan(all.indexOf('exit code 0'));
    expect(t!.record.subscriptions).toEqual([]);
    expect(t!.record.hasDeferred).toBe(false);
    await h.close();
  });

  it('brings quiet output in before the user text that wakes the thread', async () => {
    const watch = watchTool();
    const h = makeHarness(mode, storeKind, { brain: scriptBrain, tools: [watch] });
    await h.send(userText('t', 'watch', 'u1'));
    await h.settle();
    const ctx = [...watch.ctxs.values()][0];
    await ctx.emit({ content: 'compiling', associative: true, quiet: true, id: 'q1' });
    await h.settleSlices();
    await h.send(userText('t', 'how is it going', 'u2'));
    await h.settle();
    const t = await h.store.loadThread('t');
    const texts = t!.history.map((m) => JSON.stringify(m));
    const at = (x: string) => texts.findIndex((m) => m.includes(x));
    expect(at('compiling')).toBeGreaterThan(0);
    expect(at('how is it going')).toBeGreaterThan(at('compiling'));
    // The subscription goes on: the quiet event was not its end.
    expect(t!.record.subscriptions).toHaveLength(1);
    await h.close();
  });

  it("moves a running call to the background when the user writes, if its tool can, instead of cancelling it", async () => {
    const job = backgroundTool();
    const brain = (r: CompletionRequest): ScriptedReply => (lastText(r) === 'run' ? { toolCall: { name: 'job', input: {} } } : { text: `ack: ${lastText(r).slice(0, 30)}` });
    const h = makeHarness(mode, storeKind, { brain, tools: [job] });
    await h.send(userText('t', 'run', 'u1'));
    await h.settleSlices();
    const [callId, ctx] = [...job.ctxs][0];
    await h.send(userText('t', 'also look at the docs', 'u2'));
    await h.settle();
    let t = await h.store.loadThread('t');
    expect(job.backgrounded).toEqual([callId]);
    expect(job.cancelled).toEqual([]);
    expect(JSON.stringify(t!.history)).toContain(`subscription id: ${callId}`);
    expect(t!.record.subscriptions.map((s) => s.callId)).toEqual([callId]);

    await ctx.emit({ content: 'job finished: exit code 0', associative: true, final: true, id: 'j1' });
    await h.settle();
    t = await h.store.loadThread('t');
    expect(JSON.stringify(t!.history)).toContain('job finished: exit code 0');
    expect(t!.record.subscriptions).toEqual([]);
    await h.close();
  });
});

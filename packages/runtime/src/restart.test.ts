// An asynchronous result is matched to its call whether it arrives before or after a restart.
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toolResult, userText, type InputMessage } from './input.js';
import { LocalSystem } from './local-system.js';
import { text } from './messages.js';
import { ScriptedProvider, type ScriptedReply } from './scripted-provider.js';
import { SqliteStore } from './sqlite-store.js';
import { StepSystem } from './step-system.js';
import type { CompletionRequest } from './provider.js';
import { lastText, shape, tempDir, threadOf } from './test-support/harness.js';
import type { AsyncTool } from './tool.js';

const brain = (r: CompletionRequest) =>
  r.messages.at(-1)!.content[0].type === 'tool_result'
    ? { text: 'Got the result.' }
    : { text: 'Starting a job on the tool server.', toolCall: { name: 'remote_job', input: {} } };

/** A tool served by another process: its calls outlive ours, its result may come any time. */
function remoteJob(dispatched: string[]): AsyncTool {
  return {
    kind: 'async',
    name: 'remote_job',
    description: 'Run a job on the tool server.',
    input_schema: { type: 'object', properties: {} },
    survivesRestart: true,
    dispatch: (_input, ctx) => {
      dispatched.push(ctx.call.id);
    },
  };
}

type Mode = 'local' | 'step';

async function firstLife(mode: Mode, db: string, dispatched: string[]): Promise<string> {
  const store = new SqliteStore({ path: db });
  const opts = { store, provider: new ScriptedProvider(brain), tools: [remoteJob(dispatched)], model: 'm' };
  if (mode === 'local') {
    const system = new LocalSystem(opts);
    await system.send(userText('t1', 'go', 'u1'));
    await system.whenIdle({ ignoreRunningTools: true });
    await system.close();
  } else {
    const system = new StepSystem({ ...opts, send: async () => {} });
    await system.step([userText('t1', 'go', 'u1')]);
    await store.close();
  }
  expect(dispatched).toHaveLength(1);
  return dispatched[0];
}

async function secondLife(mode: Mode, db: string, deliverAfterStart: string | null, dispatched: string[]) {
  const store = new SqliteStore({ path: db });
  const opts = { store, provider: new ScriptedProvider(brain), tools: [remoteJob(dispatched)], model: 'm' };
  if (mode === 'local') {
    const system = new LocalSystem(opts);
    await system.start();
    if (deliverAfterStart) await system.send(toolResult('t1', deliverAfterStart, [text('job output')]));
    await system.whenIdle({ ignoreRunningTools: true });
    await system.close();
  } else {
    const system = new StepSystem({ ...opts, send: async () => {} });
    const queued = await store.pendingInputs();
    const batch = deliverAfterStart ? [...queued, toolResult('t1', deliverAfterStart, [text('job output')])] : queued;
    await system.step(batch);
    await store.close();
  }
  const reader = new SqliteStore({ path: db });
  const t = await reader.loadThread('t1');
  await reader.close();
  return t!;
}

describe.each(['local', 'step'] as const)('restart in %s mode', (mode) => {
  it('a result that arrives after a restart is matched to its call', async () => {
    const dir = tempDir();
    const db = join(dir, 'state.db');
    const dispatched: string[] = [];
    const callId = await firstLife(mode, db, dispatched);
    const t = await secondLife(mode, db, callId, dispatched);
    expect(shape(t.history)).toEqual(['user:text', 'assistant:text+tool_use', 'user:tool_result', 'assistant:text']);
    expect(t.history[2].content[0]).toMatchObject({ tool_use_id: callId, content: [{ text: 'job output' }] });
    expect(dispatched).toEqual([callId]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a result queued before a restart is matched to its call after it', async () => {
    const dir = tempDir();
    const db = join(dir, 'state.db');
    const dispatched: string[] = [];
    const callId = await firstLife(mode, db, dispatched);
    // The result reached the durable queue, then the process went down before a slice ran.
    const store = new SqliteStore({ path: db });
    await store.enqueue([toolResult('t1', callId, [text('job output')])]);
    await store.close();
    const t = await secondLife(mode, db, null, dispatched);
    expect(shape(t.history)).toEqual(['user:text', 'assistant:text+tool_use', 'user:tool_result', 'assistant:text']);
    expect(t.history[2].content[0]).toMatchObject({ tool_use_id: callId });
    expect(dispatched).toEqual([callId]);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('deferred inputs across a restart', () => {
  it('events waiting behind a pending call live in the durable queue and follow its result after a restart', async () => {
    const dir = tempDir();
    const db = join(dir, 'state.db');
    const emitted: Array<(n: number) => Promise<void>> = [];
    const watch: AsyncTool = {
      kind: 'async',
      name: 'watch',
      description: 'Watch.',
      input_schema: { type: 'object', properties: {} },
      dispatch: async (_i, ctx) => {
        await ctx.respond({ content: 'watching', subscription: true });
        emitted.push((n) => ctx.emit({ id: `e${n}`, content: `event ${n}`, associative: true }));
      },
    };
    const dispatched: string[] = [];
    const brain = (r: CompletionRequest) => {
      const last = r.messages.at(-1)!.content[0];
      if (last.type === 'text' && last.text === 'watch') return { toolCall: { name: 'watch', input: {} } };
      if (last.type === 'text' && last.text === 'job') return { toolCall: { name: 'remote_job', input: {} } };
      return { text: 'ok' };
    };
    const open = () =>
      new LocalSystem({ store: new SqliteStore({ path: db }), provider: new ScriptedProvider(brain), tools: [watch, remoteJob(dispatched)], model: 'm' });

    const first = open();
    await first.sendUserText('t1', 'watch', 'u1');
    await first.whenIdle();
    await first.sendUserText('t1', 'job', 'u2');
    await first.whenIdle({ ignoreRunningTools: true });
    await emitted[0](1);
    await emitted[0](2);
    await first.whenIdle({ ignoreRunningTools: true });
    await first.close();

    const second = open();
    await second.start();
    await second.whenIdle({ ignoreRunningTools: true });
    const reader = new SqliteStore({ path: db });
    expect(JSON.stringify((await reader.loadThread('t1'))!.history)).not.toContain('event 1');
    await second.send(toolResult('t1', dispatched[0], [text('job output')]));
    await second.whenIdle({ ignoreRunningTools: true });
    await second.close();
    const texts = (await reader.loadThread('t1'))!.history.map((m) => JSON.stringify(m));
    await reader.close();
    const at = (s: string) => texts.findIndex((x) => x.includes(s));
    expect(at('job output')).toBeGreaterThan(0);
    expect(at('event 1')).toBeGreaterThan(at('job output'));
    // Events of one subscription that arrive together are one injected call, in their order.
    const events = texts[at('event 1')];
    expect(events.indexOf('event 2')).toBeGreaterThan(events.indexOf('event 1'));
    expect(texts.filter((x) => x.includes('event 1'))).toHaveLength(1);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('a subscription whose start was queued but not yet taken when the process died', () => {
  it('is ended by its tool on the next start, so the thread is not left waiting for it', async () => {
    const dir = tempDir();
    const db = join(dir, 'state.db');
    const dispatched: string[] = [];
    const resumed: string[] = [];
    // An in-process tool: its process (and so its stream) dies with ours.
    const serve: AsyncTool = {
      kind: 'async',
      name: 'serve',
      description: 'Serve.',
      input_schema: { type: 'object', properties: {} },
      dispatch: (_i, ctx) => void dispatched.push(ctx.call.id),
      resume: (ctx) => {
        resumed.push(ctx.call.id);
        void ctx.emit({ id: `${ctx.call.id}:final`, content: 'server lost in the restart', associative: true, final: true });
      },
    };
    const brain = (r: CompletionRequest) =>
      r.messages.at(-1)!.content[0].type === 'text' ? { toolCall: { name: 'serve', input: {} } } : { text: 'ok' };
    const open = () => new LocalSystem({ store: new SqliteStore({ path: db }), provider: new ScriptedProvider(brain), tools: [serve], model: 'm' });

    const first = open();
    await first.sendUserText('t1', 'serve', 'u1');
    await first.whenIdle({ ignoreRunningTools: true });
    await first.close();
    // The tool answered "running in the background" (a subscription), then the process went
    // down before a slice took that answer: the subscription is not in the thread's record yet.
    const store = new SqliteStore({ path: db });
    await store.enqueue([toolResult('t1', dispatched[0], [text('serving in the background')], { subscription: true })]);
    expect(await store.activeSubscriptions()).toEqual([]);
    await store.close();

    const second = open();
    await second.start();
    await second.whenIdle({ ignoreRunningTools: true });
    await second.close();
    const reader = new SqliteStore({ path: db });
    const t = (await reader.loadThread('t1'))!;
    await reader.close();
    expect(resumed).toEqual(dispatched);
    const texts = t.history.map((m) => JSON.stringify(m));
    const at = (s: string) => texts.findIndex((x) => x.includes(s));
    expect(at('serving in the background')).toBeGreaterThan(0);
    expect(at('server lost in the restart')).toBeGreaterThan(at('serving in the background'));
    expect(t.record.subscriptions).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('timers that came due while the process was down', () => {
  const napBrain = (r: CompletionRequest) => {
    const last = r.messages.at(-1)!.content[0];
    if (last.type === 'text') return { text: 'Napping for an hour.', toolCall: { name: 'sleep', input: { seconds: 3600 } } };
    return { text: 'Awake.' };
  };

  it.each(['local', 'step'] as const)('fire once on the next start (%s mode)', async (mode) => {
    const dir = tempDir();
    const db = join(dir, 'state.db');
    const first = new LocalSystem({ store: new SqliteStore({ path: db }), provider: new ScriptedProvider(napBrain), model: 'm' });
    await first.sendUserText('t1', 'nap', 'u1');
    await first.whenIdle();
    await first.close();

    const later = () => Date.now() + 2 * 3600_000;
    if (mode === 'local') {
      const second = new LocalSystem({ store: new SqliteStore({ path: db }), provider: new ScriptedProvider(napBrain), model: 'm', now: later });
      let woke!: () => void;
      const awake = new Promise<void>((r) => (woke = r));
      second.subscribe((e) => e.type === 'slice-finished' && e.outcome === 'completed' && woke());
      await second.start();
      await awake;
      await second.whenIdle();
      await second.close();
    } else {
      const store = new SqliteStore({ path: db });
      const queue: InputMessage[] = [];
      const step = new StepSystem({ store, provider: new ScriptedProvider(napBrain), model: 'm', send: async (i) => void queue.push(i) });
      expect(await step.fireTimers(Date.now())).toBe(0); // not due yet
      expect(await step.fireTimers(later())).toBe(1);
      expect(await step.fireTimers(later())).toBe(0); // fired once
      await step.step(queue.splice(0));
      await store.close();
    }
    const reader = new SqliteStore({ path: db });
    const t = (await reader.loadThread('t1'))!;
    await reader.close();
    expect(shape(t.history)).toEqual(['user:text', 'assistant:text+tool_use', 'user:tool_result', 'assistant:text']);
    expect(t.record.batch).toEqual([]);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('a report under review when the system closes', () => {
  it('is abandoned by close() and reviewed again, then delivered once, after the restart', async () => {
    const dir = tempDir();
    const db = join(dir, 'state.db');
    const brain = (r: CompletionRequest): ScriptedReply => {
      const me = threadOf(r);
      if (me.stack.length === 1) {
        return lastText(r) === 'go'
          ? { toolCall: { name: 'spawn_thread', input: { instructions: 'edit', child_of: me.stack } } }
          : { text: 'ok' };
      }
      return lastText(r).startsWith('Report sent')
        ? { text: 'done' }
        : { toolCall: { name: 'report_to_parent', input: { report: 'edited a.ts' } } };
    };
    const reviewed: string[] = [];
    let asked!: () => void;
    const underReview = new Promise<void>((resolve) => (asked = resolve));
    // First life: the human never decides; closing must not wait for them.
    const first = new LocalSystem({
      store: new SqliteStore({ path: db }),
      provider: new ScriptedProvider(brain),
      model: 'm',
      reviewReport: (t, _report, { signal }) =>
        new Promise((_resolve, reject) => {
          reviewed.push(t.id);
          signal.addEventListener('abort', () => reject(new Error('closing')), { once: true });
          asked();
        }),
    });
    const errors: string[] = [];
    first.subscribe((e) => e.type === 'error' && errors.push(e.message));
    await first.send(userText('root', 'go', 'u1'));
    await underReview;
    await first.close();
    expect(reviewed).toHaveLength(1);
    // Closing is not an error, and the report did not reach the parent.
    expect(errors).toEqual([]);
    const between = new SqliteStore({ path: db });
    expect(JSON.stringify((await between.loadThread('root'))!.history)).not.toContain('edited a.ts');
    await between.close();

    // Second life: the same report is reviewed again and reaches the parent once, with the verdict.
    const second = new LocalSystem({
      store: new SqliteStore({ path: db }),
      provider: new ScriptedProvider(brain),
      model: 'm',
      reviewReport: async (t, report) => {
        reviewed.push(t.id);
        return { note: `The human accepted: ${report}` };
      },
    });
    await second.start();
    await second.whenIdle();
    await second.close();
    expect(reviewed).toHaveLength(2);
    expect(reviewed[1]).toBe(reviewed[0]);
    const reader = new SqliteStore({ path: db });
    const root = JSON.stringify((await reader.loadThread('root'))!.history);
    await reader.close();
    expect(root.match(/The human accepted: edited a\.ts/g)).toHaveLength(1);
    rmSync(dir, { recursive: true, force: true });
  });
});

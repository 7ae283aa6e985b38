import type { RuntimeServices } from './services.js';
import { closeThread, deliverReport, spawnChild } from './thread-lifecycle.js';
import type { AsyncTool, SyncTool, Tool } from './tool.js';
import { frameParentMessage, frameSpawned } from './wording.js';
import { localTimeZone, zonedInstant } from './zoned-time.js';

const obj = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object' as const,
  properties,
  required,
  additionalProperties: false,
});

/** The runtime's own tools (docs/architecture.md, *Threads, identity and caching*), bound to the system's services. */
/** The built-in calls with which a child reports to its parent (close_thread may carry a report). */
export const REPORTING_TOOLS: ReadonlySet<string> = new Set(['report_to_parent', 'close_thread']);

export function builtinTools(s: RuntimeServices): Tool[] {
  const spawnThread: SyncTool = {
    kind: 'sync',
    name: 'spawn_thread',
    description:
      'Start a child thread that works in parallel with you on part of the task. It inherits this ' +
      'conversation up to this call. Say in the instructions exactly what the child must do and what ' +
      'you will do meanwhile, so the work is not duplicated. Its reports arrive on this call. To split ' +
      'work between several children, call this several times in one reply: they start together. ' +
      'Runs after the other tool calls of the same reply, so the child sees their effects.',
    input_schema: obj(
      {
        instructions: { type: 'string', description: "The child's task, complete and self-contained." },
        child_of: {
          type: 'array',
          items: { type: 'string' },
          description: 'Your own thread stack, root first: the last "Thread stack:" line you were given.',
        },
      },
      ['instructions', 'child_of'],
    ),
    runsLast: true,
    display: (input) => `Spawn thread: ${String(input.instructions).split('\n')[0]}`,
    async execute(input, ctx) {
      const claimed = JSON.stringify(input.child_of);
      const actual = JSON.stringify(ctx.threadStack);
      if (claimed !== actual) {
        return {
          isError: true,
          content:
            `Error: you are in thread ${ctx.threadId} (stack ${actual}), not ${claimed}. Do NOT spawn ` +
            "the threads your parent planned; do your own task.",
        };
      }
      const open = await s.store.countOpenThreads(ctx.threadStack[0]);
      if (open >= s.limits.maxLiveThreads) {
        return {
          isError: true,
          content:
            `Error: ${open} threads are already running (the limit is ${s.limits.maxLiveThreads}). Wait ` +
            'for children to report and close before spawning more.',
        };
      }
      const childId = await spawnChild(s, ctx.thread, ctx.call.id);
      return {
        content: frameSpawned(childId),
        display: { summary: `started thread ${childId}` },
        spawned: childId,
      };
    },
  };

  const reportToParent: SyncTool = {
    kind: 'sync',
    name: 'report_to_parent',
    description:
      'Child threads only: send a report to your parent thread (it arrives on the call that spawned you). ' +
      'Runs after the other tool calls of the same reply.',
    input_schema: obj({ report: { type: 'string' } }, ['report']),
    runsLast: true,
    display: () => 'Report to parent',
    async execute(input, ctx) {
      const t = ctx.thread;
      if (t.parentId === null) {
        return {
          isError: true,
          content: 'Error: this is the root thread, which has no parent to report to. Answer the user directly instead.',
        };
      }
      const note = await deliverReport(s, t, `report:${t.id}:${ctx.call.id}`, String(input.report), { closed: false });
      return { content: note ? `Report sent to parent thread. ${note}` : 'Report sent to parent thread.', display: { summary: 'report sent' } };
    },
  };

  const closeThreadTool: SyncTool = {
    kind: 'sync',
    name: 'close_thread',
    description:
      'Child threads only: end your own thread when its task is done, optionally with a final report to ' +
      'the parent. Runs after the other tool calls of the same reply.',
    input_schema: obj({ thread_id: { type: 'string' }, report_to_parent: { type: 'string' } }, ['thread_id']),
    runsLast: true,
    display: () => 'Close thread',
    async execute(input, ctx) {
      if (ctx.thread.parentId === null) {
        return {
          isError: true,
          content: 'Error: this is the root thread, which cannot be closed: only child threads can. When the task is done, just answer the user.',
        };
      }
      if (input.thread_id !== ctx.threadId) {
        return { isError: true, content: `Error: you can only close your own thread (${ctx.threadId}).` };
      }
      const report = typeof input.report_to_parent === 'string' ? input.report_to_parent : undefined;
      // The live record: closing marks it in place, so a cached copy of the thread stays current.
      await closeThread(s, ctx.thread, report);
      return { content: 'Thread closed.', display: { summary: 'thread closed' }, stop: true };
    },
  };

  const sendMessageToChild: SyncTool = {
    kind: 'sync',
    name: 'send_message_to_child',
    description: 'Send a message to one of your direct child threads.',
    input_schema: obj({ thread_id: { type: 'string' }, message: { type: 'string' } }, ['thread_id', 'message']),
    display: (input) => `Message to ${String(input.thread_id)}`,
    async execute(input, ctx) {
      const childId = String(input.thread_id);
      const child = await s.store.loadThread(childId);
      if (!child || child.record.parentId !== ctx.threadId) {
        return { isError: true, content: `Error: thread ${childId} is not a child of the current thread ${ctx.threadId}` };
      }
      if (child.record.status === 'closed') {
        return { isError: true, content: `Error: thread ${childId} is closed.` };
      }
      await s.deliver({
        id: `msg:${ctx.call.id}`,
        threadId: childId,
        body: { kind: 'parent_message', text: frameParentMessage(String(input.message)), message: String(input.message) },
      });
      return { content: 'Message sent to child thread.', display: { summary: 'message sent' } };
    },
  };

  const cancelSubscription: SyncTool = {
    kind: 'sync',
    name: 'cancel_subscription',
    description: 'Stop a subscription (e.g. a running command) started by one of your tool calls.',
    input_schema: obj({ tool_call_id: { type: 'string' } }, ['tool_call_id']),
    display: (input) => `Cancel ${String(input.tool_call_id)}`,
    execute(input, ctx) {
      const id = String(input.tool_call_id);
      const sub = ctx.thread.subscriptions.find((x) => x.callId === id);
      if (!sub) return { isError: true, content: `Error: no active subscription found for tool call ID '${id}'` };
      const tool = s.tools.get(sub.name);
      if (tool?.kind === 'async') {
        tool.cancel?.({ threadId: ctx.threadId, threadStack: ctx.threadStack, call: { id, name: sub.name, input: sub.input }, thread: ctx.thread });
      }
      return { content: `Subscription '${id}' cancelled successfully.`, display: { summary: 'subscription cancelled' }, unsubscribe: [id] };
    },
  };

  const timer = (
    name: string,
    description: string,
    schema: ReturnType<typeof obj>,
    due: (input: Record<string, unknown>) => number | null,
    display: (input: Record<string, unknown>) => string,
  ): AsyncTool => ({
    kind: 'async',
    name,
    description,
    input_schema: schema,
    passive: true,
    // Wake-ups are stored: a restart neither loses nor repeats them.
    survivesRestart: true,
    display,
    async dispatch(input, ctx) {
      const dueAt = due(input);
      if (dueAt === null) return;
      await s.store.addTimer({ threadId: ctx.threadId, callId: ctx.call.id, dueAt });
      s.timerAdded(dueAt);
    },
  });

  const sleep = timer(
    'sleep',
    'Wait this many seconds, then continue. New input or events end the wait early.',
    obj({ seconds: { type: 'number', minimum: 0 }, reason: { type: 'string' } }, ['seconds']),
    (input) => s.now() + Number(input.seconds) * 1000,
    (input) => `Sleep ${String(input.seconds)} s`,
  );
  const sleepUntil = timer(
    'sleep_until',
    'Wait until a wall-clock date and time (default time zone: this machine\'s). New input or events end the wait early.',
    obj({ date: { type: 'string', description: 'YYYY-MM-DD' }, time: { type: 'string', description: 'HH:MM or HH:MM:SS' }, timezone: { type: 'string', description: 'IANA name, e.g. Europe/Paris' } }, ['date', 'time']),
    (input) => zonedInstant(String(input.date), String(input.time), typeof input.timezone === 'string' ? input.timezone : localTimeZone()),
    (input) => `Sleep until ${String(input.date)} ${String(input.time)}${typeof input.timezone === 'string' ? ` ${input.timezone}` : ''}`,
  );
  const sleepUntilEvent = timer(
    'sleep_until_event_or_input',
    'Wait, using no resources, until an event (from a subscription or a child) or user input arrives.',
    obj({}),
    () => null,
    () => 'Wait for events or input',
  );

  return [spawnThread, reportToParent, closeThreadTool, sendMessageToChild, cancelSubscription, sleep, sleepUntil, sleepUntilEvent];
}

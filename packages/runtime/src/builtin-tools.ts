import type { RuntimeServices } from './services.js';
import { closeThread, deliverReport, spawnChild } from './thread-lifecycle.js';
import { defineTool, type InputOf, type ToolSchema } from './define-tool.js';
import type { AsyncTool, Tool } from './tool.js';
import { frameParentMessage, frameSpawned } from './wording.js';
import { localTimeZone, zonedInstant } from './zoned-time.js';

// A closed object schema, its literal types kept (the tools' input types come from them).
const obj = <const P extends Record<string, object>, const R extends ReadonlyArray<keyof P & string> = []>(properties: P, required?: R) => ({
  type: 'object' as const,
  properties,
  required: required ?? [],
  additionalProperties: false as const,
});

/** The runtime's own tools (docs/architecture.md, *Threads, identity and caching*), bound to the system's services. */
/** The built-in calls with which a child reports to its parent (close_thread may carry a report). */
export const REPORTING_TOOLS: ReadonlySet<string> = new Set(['report_to_parent', 'close_thread']);

export function builtinTools(s: RuntimeServices): Tool[] {
  const spawnThread = defineTool({
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
    display: (input) => `Spawn thread: ${input.instructions.split('\n')[0]}`,
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
  });

  const reportToParent = defineTool({
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
      const note = await deliverReport(s, t, `report:${t.id}:${ctx.call.id}`, input.report, { closed: false });
      return { content: note ? `Report sent to parent thread. ${note}` : 'Report sent to parent thread.', display: { summary: 'report sent' } };
    },
  });

  const closeThreadTool = defineTool({
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
      // The live record: closing marks it in place, so a cached copy of the thread stays current.
      await closeThread(s, ctx.thread, input.report_to_parent);
      return { content: 'Thread closed.', display: { summary: 'thread closed' }, stop: true };
    },
  });

  const sendMessageToChild = defineTool({
    kind: 'sync',
    name: 'send_message_to_child',
    description: 'Send a message to one of your direct child threads.',
    input_schema: obj({ thread_id: { type: 'string' }, message: { type: 'string' } }, ['thread_id', 'message']),
    display: (input) => `Message to ${input.thread_id}`,
    async execute(input, ctx) {
      const childId = input.thread_id;
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
        body: { kind: 'parent_message', text: frameParentMessage(input.message), message: input.message },
      });
      return { content: 'Message sent to child thread.', display: { summary: 'message sent' } };
    },
  });

  const cancelSubscription = defineTool({
    kind: 'sync',
    name: 'cancel_subscription',
    description: 'Stop a subscription (e.g. a running command) started by one of your tool calls.',
    input_schema: obj({ tool_call_id: { type: 'string' } }, ['tool_call_id']),
    display: (input) => `Cancel ${input.tool_call_id}`,
    execute(input, ctx) {
      const id = input.tool_call_id;
      const sub = ctx.thread.subscriptions.find((x) => x.callId === id);
      if (!sub) return { isError: true, content: `Error: no active subscription found for tool call ID '${id}'` };
      const tool = s.tools.get(sub.name);
      if (tool?.kind === 'async') {
        tool.cancel?.({ threadId: ctx.threadId, threadStack: ctx.threadStack, call: { id, name: sub.name, input: sub.input }, thread: ctx.thread });
      }
      return { content: `Subscription '${id}' cancelled successfully.`, display: { summary: 'subscription cancelled' }, unsubscribe: [id] };
    },
  });

  const timer = <const S extends ToolSchema>(
    name: string,
    description: string,
    schema: S,
    due: (input: InputOf<S>) => number | null,
    display: (input: InputOf<S>) => string,
  ): AsyncTool => {
    // As the runtime calls them: the registry checked the input against the schema (see
    // defineTool; TypeScript can't follow a schema left generic here).
    const dueOf = due as unknown as (input: Record<string, unknown>) => number | null;
    const displayOf = display as unknown as (input: Record<string, unknown>) => string;
    return {
      kind: 'async',
      name,
      description,
      input_schema: schema,
      passive: true,
      // Wake-ups are stored: a restart neither loses nor repeats them.
      survivesRestart: true,
      display: displayOf,
      async dispatch(input, ctx) {
        const dueAt = dueOf(input);
        if (dueAt === null) return;
        await s.store.addTimer({ threadId: ctx.threadId, callId: ctx.call.id, dueAt });
        s.timerAdded(dueAt);
      },
    };
  };

  const sleep = timer(
    'sleep',
    'Wait this many seconds, then continue. New input or events end the wait early.',
    obj({ seconds: { type: 'number', minimum: 0 }, reason: { type: 'string' } }, ['seconds']),
    (input) => s.now() + input.seconds * 1000,
    (input) => `Sleep ${input.seconds} s`,
  );
  const sleepUntil = timer(
    'sleep_until',
    'Wait until a wall-clock date and time (default time zone: this machine\'s). New input or events end the wait early.',
    obj({ date: { type: 'string', description: 'YYYY-MM-DD' }, time: { type: 'string', description: 'HH:MM or HH:MM:SS' }, timezone: { type: 'string', description: 'IANA name, e.g. Europe/Paris' } }, ['date', 'time']),
    (input) => zonedInstant(input.date, input.time, input.timezone ?? localTimeZone()),
    (input) => `Sleep until ${input.date} ${input.time}${input.timezone === undefined ? '' : ` ${input.timezone}`}`,
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

import { keptTailStart } from './compaction-tail.js';
import { derivedId, derivedThreadId } from './ids.js';
import type { EventInput, InputMessage, ReportInput } from './input.js';
import { toolResult } from './input.js';
import type { HistoryMessage } from './messages.js';
import { text } from './messages.js';
import { safePoint } from './history-view.js';
import type { RuntimeServices } from './services.js';
import type { LoadedThread, PendingCall, Subscription, ThreadRecord } from './store.js';
import { stackLine } from './thread-identity.js';
import { COMPACTION_PHRASES, frameReport, INJECTED_TOOL_NAME, type InjectedReport, type ReportFrame } from './wording.js';

export const COMPACTION_TOOL_NAME = '__harness_begin_compaction__';

/**
 * Creates a child for `spawn_thread` (idempotent by call id). It inherits the parent's history up
 * to and including the reply with the call, and that reply's calls as its own batch: it starts
 * when `startChildren` answers them.
 */
export async function spawnChild(
  s: RuntimeServices,
  parent: ThreadRecord,
  callId: string,
): Promise<string> {
  const childId = derivedThreadId('th_', parent.id, callId);
  await s.store.createThread({
    id: childId,
    parentId: parent.id,
    kind: 'child',
    spawnCallId: callId,
    // The spawning turn was committed just before: the child inherits up to and including it.
    cutoff: parent.messageCount,
    batch: parent.batch.map((c) => ({ id: c.id, name: c.name, input: c.input, dispatched: true, inherited: true })),
    seed: [],
  });
  const instructions = parent.batch.find((c) => c.id === callId)?.input.instructions;
  s.bus.emit({
    type: 'thread-spawned',
    threadId: parent.id,
    childId,
    kind: 'child',
    spawnCallId: callId,
    ...(typeof instructions === 'string' ? { task: instructions } : {}),
  });
  return childId;
}

/**
 * Starts the children one reply spawned: each gets a result for every call of that reply, so its
 * history is valid for the API: its own call's result is its instructions, a sibling's says which
 * thread that sibling is, any other call's says the parent ran it.
 */
export async function startChildren(
  s: RuntimeServices,
  parent: ThreadRecord,
  batch: readonly PendingCall[],
  spawned: ReadonlyMap<string, string>,
): Promise<void> {
  for (const [callId, childId] of spawned) {
    for (const call of batch) {
      let body: string;
      // The bodies are for the child's model; UIs (a headless run's --verbose) say it in a few words.
      let summary: string;
      if (call.id === callId) {
        const instructions = typeof call.input.instructions === 'string' ? call.input.instructions : '';
        const task = instructions.trim().split('\n')[0] ?? '';
        summary = task === '' ? 'thread started' : `thread started: ${task.length > 100 ? `${task.slice(0, 99)}…` : task}`;
        body =
          `You are now inside the thread you asked to create. Your thread ID is ${childId}; your parent ` +
          `is ${parent.id}. Follow these instructions exactly:\n\n${instructions}\n\nEverything before ` +
          "this point was your parent's context: don't redo its plan or spawn the threads it planned. " +
          // One call, one round trip: close_thread carries the report (report_to_parent keeps the thread open).
          'When you are done, call close_thread with report_to_parent saying what you did.\n' +
          stackLine([...parent.stack, childId]);
      } else if (spawned.has(call.id)) {
        body = `This call of your parent's started thread ${spawned.get(call.id)!}, a sibling working in parallel with you: that part of the work is its, not yours.`;
        summary = `sibling thread ${spawned.get(call.id)!}`;
      } else {
        body = `This call ran in your parent's thread (${parent.id}); its result went there, not to you.`;
        summary = 'ran in the parent thread';
      }
      await s.deliver(toolResult(childId, call.id, [text(body)], { display: { summary } }));
    }
  }
}

/** A threaded event: an ephemeral child sees the parent's history and this one event. */
export async function spawnEventThread(
  s: RuntimeServices,
  parent: LoadedThread,
  input: InputMessage,
  event: EventInput,
  sub: Subscription,
): Promise<void> {
  const childId = derivedThreadId('ev_', parent.record.id, input.id);
  const spawnId = derivedId('toolu_sp_', childId);
  const eventCallId = derivedId('toolu_ev_', childId);
  const seed: HistoryMessage[] = [
    {
      role: 'assistant',
      content: [
        {
          type: 'tool_use',
          id: spawnId,
          name: 'spawn_thread',
          input: { instructions: 'Spawning thread to process incoming event.', child_of: parent.record.stack },
        },
      ],
    },
    {
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: spawnId,
          content: [
            text(
              `You are inside a temporary thread (ID ${childId}) created to process the single event ` +
                `below, from subscription ${sub.callId} (${sub.name}) of thread ${parent.record.id}. ` +
                'Handle it. Your output is not shown to anyone: call report_to_parent if the parent ' +
                'should know something. This thread closes when you finish.\n' +
                stackLine([...parent.record.stack, childId]),
            ),
          ],
        },
      ],
    },
    {
      role: 'assistant',
      content: [
        {
          type: 'tool_use',
          id: eventCallId,
          name: INJECTED_TOOL_NAME,
          input: { original_tool_name: sub.name, original_tool_call_id: sub.callId, original_args: sub.input },
        },
      ],
    },
  ];
  await s.store.createThread({
    id: childId,
    parentId: parent.record.id,
    kind: 'event',
    spawnCallId: sub.callId,
    cutoff: safePoint(parent, parent.record.messageCount),
    batch: [{ id: eventCallId, name: INJECTED_TOOL_NAME, input: {}, dispatched: true, inherited: true }],
    seed,
  });
  await s.deliver(toolResult(childId, eventCallId, event.content, event.isError ? { isError: true } : {}));
  s.bus.emit({ type: 'thread-spawned', threadId: parent.record.id, childId, kind: 'event', spawnCallId: sub.callId });
}

/** Starts summarising `parent` in a compaction child; the summary replaces the prefix on load. */
export async function spawnCompactionThread(s: RuntimeServices, parent: LoadedThread, inputId: string): Promise<string> {
  const childId = derivedThreadId('cp_', parent.record.id, inputId);
  const callId = derivedId('toolu_cp_', childId);
  const cutoff = safePoint(parent, parent.record.messageCount);
  await s.store.createThread({
    id: childId,
    parentId: parent.record.id,
    kind: 'compaction',
    spawnCallId: callId,
    cutoff,
    batch: [{ id: callId, name: COMPACTION_TOOL_NAME, input: {}, dispatched: true, inherited: true }],
    seed: [{ role: 'assistant', content: [{ type: 'tool_use', id: callId, name: COMPACTION_TOOL_NAME, input: {} }] }],
  });
  const identity = stackLine([...parent.record.stack, childId]);
  await s.deliver(toolResult(childId, callId, [text(`${COMPACTION_PHRASES.instructions}\n${identity}`)]));
  s.bus.emit({ type: 'thread-spawned', threadId: parent.record.id, childId, kind: 'compaction', spawnCallId: callId });
  return childId;
}

/**
 * Closes a thread: later inputs to it are dropped, its subscriptions are cancelled (the runtime
 * we started from, hydro-project/infinity, left them running), and its parent is told (a
 * compaction child hands over its summary instead).
 */
export async function closeThread(s: RuntimeServices, thread: ThreadRecord, report?: string): Promise<void> {
  const parentId = thread.parentId;
  if (parentId === null) return;
  for (const sub of thread.subscriptions) {
    const tool = s.tools.get(sub.name);
    if (tool?.kind === 'async') {
      tool.cancel?.({ threadId: thread.id, threadStack: thread.stack, call: { id: sub.callId, name: sub.name, input: sub.input }, thread });
    }
  }
  if (thread.kind === 'compaction') {
    if (report !== undefined && report.trim() !== '') {
      await s.store.saveSummary(parentId, { upTo: thread.cutoff, text: report, keepFrom: await keepFrom(s, parentId, thread.cutoff) });
    } else {
      s.bus.emit({ type: 'error', threadId: parentId, kind: 'tool', message: 'Compaction produced no summary; history is unchanged.' });
    }
    await s.deliver({ id: `compacted:${thread.id}`, threadId: parentId, body: { kind: 'compaction_complete', childThreadId: thread.id } });
  } else if (thread.kind === 'event') {
    if (report) await deliverReport(s, thread, `closed:${thread.id}`, report, { closed: true });
  } else {
    await deliverReport(s, thread, `closed:${thread.id}`, report ?? '', { closed: true });
  }
  await s.store.closeThread(thread.id);
  thread.status = 'closed';
  s.bus.emit({ type: 'thread-closed', threadId: thread.id });
}

/**
 * Where the summarised thread's kept turns start. Its view is still the one the compaction was
 * spawned from (a thread compacts once at a time, and switches to this summary only once it is
 * in), and its messages before the cut-off never change: the same answer as at the spawn.
 */
async function keepFrom(s: RuntimeServices, threadId: string, cutoff: number): Promise<number> {
  const view = await s.store.loadThread(threadId);
  return view ? keptTailStart(view, cutoff) : cutoff;
}

/**
 * Sends a child's report to its parent, after the reviewer (if any) had its say: framed for the
 * parent's model, and as it is for UIs. Returns the reviewer's note, which the parent also reads.
 */
export async function deliverReport(
  s: RuntimeServices,
  child: Readonly<ThreadRecord>,
  inputId: string,
  report: string,
  how: { closed: boolean },
): Promise<string | undefined> {
  if (child.parentId === null) return undefined;
  const review = s.reviewReport ? await s.reviewReport(child, report, { signal: s.closing, closed: how.closed }) : {};
  const from = child.kind === 'event' ? 'event' : 'child';
  const frame: ReportFrame = { from, closed: how.closed, childThreadId: child.id };
  if (child.spawnCallId !== null) frame.subscriptionId = child.spawnCallId;
  const shown: InjectedReport = { text: report, closed: how.closed, from, childThreadId: child.id };
  if (review.note) shown.note = review.note;
  const body: ReportInput = {
    kind: 'report',
    spawnCallId: child.spawnCallId ?? 'unknown',
    childThreadId: child.id,
    text: frameReport(frame, report, review.note),
    report: shown,
  };
  if (review.attachment !== undefined) body.attachment = review.attachment;
  await s.deliver({ id: inputId, threadId: child.parentId, body });
  return review.note;
}

/** An ephemeral thread (event or compaction) ends when its turn does. */
export async function finishEphemeral(s: RuntimeServices, thread: LoadedThread): Promise<void> {
  const r = thread.record;
  if (r.status === 'closed' || r.batch.length > 0) return;
  if (r.kind === 'compaction') {
    const last = [...thread.history].reverse().find((m) => m.role === 'assistant');
    const summary = last?.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
    await closeThread(s, r, summary);
  } else if (r.kind === 'event') {
    await closeThread(s, r);
  }
}

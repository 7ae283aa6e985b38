import { derivedId } from './ids.js';
import type { EventInput, InputMessage, ReportInput } from './input.js';
import { toolResult } from './input.js';
import type { HistoryMessage } from './messages.js';
import { text } from './messages.js';
import { safePoint } from './history-view.js';
import type { RuntimeServices } from './services.js';
import type { LoadedThread, Subscription, ThreadRecord } from './store.js';
import { INJECTED_TOOL_NAME } from './tool-registry.js';

export const COMPACTION_TOOL_NAME = '__harness_begin_compaction__';

const COMPACTION_INSTRUCTIONS =
  'You are inside a compaction thread holding the whole conversation above. Write a summary that ' +
  'lets the work continue without it: the goal, decisions and their reasons, progress so far, files ' +
  'and code changed (with paths), commands run and their outcomes, and what remains to do. Reply ' +
  'with the summary only, as plain text, without calling tools.';

/** Creates a child for `spawn_thread` and hands it its instructions. Idempotent by call id. */
export async function spawnChild(
  s: RuntimeServices,
  parent: ThreadRecord,
  callId: string,
  input: Record<string, unknown>,
): Promise<string> {
  const childId = derivedId('th_', parent.id, callId);
  await s.store.createThread({
    id: childId,
    parentId: parent.id,
    kind: 'child',
    spawnCallId: callId,
    // The spawning turn was committed just before: the child inherits up to and including it.
    cutoff: parent.messageCount,
    pendingCall: { id: callId, name: 'spawn_thread', input, dispatched: true },
    seed: [],
  });
  const instructions = String(input.instructions ?? '');
  await s.deliver(
    toolResult(childId, callId, [
      text(
        `You are now inside the thread you asked to create. Your thread ID is ${childId}; your parent ` +
          `is ${parent.id}. Follow these instructions exactly:\n\n${instructions}\n\nEverything before ` +
          "this point was your parent's context: don't redo its plan or spawn the threads it planned. " +
          'When you are done, call report_to_parent with what you did, then close_thread.',
      ),
    ]),
  );
  s.bus.emit({ type: 'thread-spawned', threadId: parent.id, childId, kind: 'child', spawnCallId: callId });
  return childId;
}

/** A threaded event: an ephemeral child sees the parent's history and this one event. */
export async function spawnEventThread(
  s: RuntimeServices,
  parent: LoadedThread,
  input: InputMessage,
  event: EventInput,
  sub: Subscription,
): Promise<void> {
  const childId = derivedId('ev_', parent.record.id, input.id);
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
                'should know something. This thread closes when you finish.',
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
    pendingCall: { id: eventCallId, name: INJECTED_TOOL_NAME, input: {}, dispatched: true },
    seed,
  });
  await s.deliver(toolResult(childId, eventCallId, event.content, event.isError ? { isError: true } : {}));
  s.bus.emit({ type: 'thread-spawned', threadId: parent.record.id, childId, kind: 'event', spawnCallId: sub.callId });
}

/** Starts summarising `parent` in a compaction child; the summary replaces the prefix on load. */
export async function spawnCompactionThread(s: RuntimeServices, parent: LoadedThread, inputId: string): Promise<string> {
  const childId = derivedId('cp_', parent.record.id, inputId);
  const callId = derivedId('toolu_cp_', childId);
  const cutoff = safePoint(parent, parent.record.messageCount);
  await s.store.createThread({
    id: childId,
    parentId: parent.record.id,
    kind: 'compaction',
    spawnCallId: callId,
    cutoff,
    pendingCall: { id: callId, name: COMPACTION_TOOL_NAME, input: {}, dispatched: true },
    seed: [{ role: 'assistant', content: [{ type: 'tool_use', id: callId, name: COMPACTION_TOOL_NAME, input: {} }] }],
  });
  await s.deliver(toolResult(childId, callId, [text(COMPACTION_INSTRUCTIONS)]));
  s.bus.emit({ type: 'thread-spawned', threadId: parent.record.id, childId, kind: 'compaction', spawnCallId: callId });
  return childId;
}

/**
 * Closes a thread: later inputs to it are dropped, its subscriptions are cancelled (the reference
 * left them running), and its parent is told (a compaction child hands over its summary instead).
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
      await s.store.saveSummary(parentId, { upTo: thread.cutoff, text: report });
    } else {
      s.bus.emit({ type: 'error', threadId: parentId, kind: 'tool', message: 'Compaction produced no summary; history is unchanged.' });
    }
    await s.deliver({ id: `compacted:${thread.id}`, threadId: parentId, body: { kind: 'compaction_complete', childThreadId: thread.id } });
  } else if (thread.kind === 'event') {
    if (report) {
      const prefix =
        `An event from your subscription ${thread.spawnCallId} was processed by a child thread ${thread.id}. ` +
        'The subscription remains active. Report from the child:\n';
      await deliverReport(s, thread, `closed:${thread.id}`, report, prefix);
    }
  } else {
    const prefix = report
      ? `Child thread with ID ${thread.id} has shut down. Report from child thread: `
      : `Child thread with ID ${thread.id} has shut down`;
    await deliverReport(s, thread, `closed:${thread.id}`, report ?? '', prefix);
  }
  await s.store.closeThread(thread.id);
  thread.status = 'closed';
  s.bus.emit({ type: 'thread-closed', threadId: thread.id });
}

/**
 * Sends a child's report to its parent, after the reviewer (if any) had its say. Returns the
 * reviewer's note, which the parent also reads.
 */
export async function deliverReport(
  s: RuntimeServices,
  child: Readonly<ThreadRecord>,
  inputId: string,
  report: string,
  prefix: string,
): Promise<string | undefined> {
  if (child.parentId === null) return undefined;
  const review = s.reviewReport ? await s.reviewReport(child as ThreadRecord, report, { signal: s.closing }) : {};
  const body: ReportInput = {
    kind: 'report',
    spawnCallId: child.spawnCallId ?? 'unknown',
    childThreadId: child.id,
    text: review.note ? `${prefix}${report}\n\n${review.note}` : `${prefix}${report}`,
  };
  if (review.attachment !== undefined) body.attachment = review.attachment;
  await s.deliver({ id: inputId, threadId: child.parentId, body });
  return review.note;
}

/** An ephemeral thread (event or compaction) ends when its turn does. */
export async function finishEphemeral(s: RuntimeServices, thread: LoadedThread): Promise<void> {
  const r = thread.record;
  if (r.status === 'closed' || r.pendingCall !== null) return;
  if (r.kind === 'compaction') {
    const last = [...thread.history].reverse().find((m) => m.role === 'assistant');
    const summary = last?.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n');
    await closeThread(s, r, summary);
  } else if (r.kind === 'event') {
    await closeThread(s, r);
  }
}

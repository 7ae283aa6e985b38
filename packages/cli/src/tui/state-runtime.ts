import type { RuntimeEvent } from '@infinity-code/runtime';
// The light subpath: the UI's first frame must not wait for SQLite and the rest of the runtime.
import { addUsage } from '@infinity-code/runtime/messages';
import { formatDelay, shortId, truncate } from './format.js';
import { eventLines, finishedCall, reportText, taskLabel } from './item-data.js';
import { diffStat, isReviewDiff } from '../review-diff.js';
import { addTail, flushLive, flushThinking, notice, pushItem, updateThread, type ChildThread, type RunningTool, type UiState } from './ui-state.js';

const CLOSED_KEPT = 256;

/** How a runtime event changes what the screen shows. Pure; `now`: when it happened (epoch ms), if known. */
export function reduceRuntime(s: UiState, e: RuntimeEvent, now?: number): UiState {
  // Every thread's completions count, a closed one's last too.
  if (e.type === 'completion-finished') return completionUsage(s, e);
  if (e.threadId !== s.rootThreadId) {
    if (s.closedThreads.includes(e.threadId)) return e.type === 'error' ? reduceChild(s, e) : s;
    return reduceChild(knowThread(s, e.threadId), e, now);
  }
  switch (e.type) {
    case 'slice-started':
      return { ...s, busy: true };
    case 'completion-started': {
      const { silentSince: _, ...next } = flushLive(s);
      return now === undefined ? next : { ...next, completionSince: now };
    }
    case 'completion-silence': {
      const { silentSince: _, ...next } = s;
      return e.since === null ? next : { ...next, silentSince: e.since };
    }
    case 'text-delta': {
      const t = flushThinking(s);
      return { ...t, liveText: t.liveText + e.text };
    }
    case 'thinking-delta':
      // A new block ('' first) after another one's end: the earlier notes are done.
      if (e.text === '' && s.liveThinking !== null && s.liveThinking.trim() !== '') return { ...flushThinking(s), liveThinking: '' };
      return { ...s, liveThinking: (s.liveThinking ?? '') + e.text };
    case 'completion-retry':
      // The quick retries of an API never reached are not news: its one error says it all.
      if (e.kind === 'unreachable') return { ...s, liveText: '', liveThinking: null };
      // The runtime discards the partial completion and asks again: so does the screen.
      return notice({ ...s, liveText: '', liveThinking: null }, 'retry', `${e.message} Retrying in ${formatDelay(e.delayMs)} (attempt ${e.attempt}).`);
    case 'tool-call': {
      const display = e.display ?? `${e.call.name} ${truncate(JSON.stringify(e.call.input), 80)}`;
      const next = flushLive(s);
      return {
        ...next,
        running: [...next.running, runningRow(e, display, now)],
        rootCalls: { ...next.rootCalls, [e.call.id]: display },
      };
    }
    case 'tool-result': {
      const next = e.subscription ? toBackground(s, e.threadId, e.toolUseId) : s;
      return finishTool(next, e.toolUseId, e.isError ? 'error' : 'ok', finishedCall(e.display, e.content));
    }
    case 'tool-interrupted':
      // A wait ended by an event or a message did its job.
      if (e.passive) return finishTool(s, e.callId, 'ok', { summary: 'woken by an event or a message' });
      return finishTool(s, e.callId, 'interrupted', { summary: e.reason === 'restart' ? 'interrupted by a restart' : 'interrupted' });
    case 'tool-progress':
      return progress(s, e);
    case 'event-injected':
      return injected(e.final ? endBackground(s, e.threadId, e.originalCallId) : s, e);
    case 'thread-spawned':
      return spawned(s, e);
    case 'compaction-started':
      return notice(s, 'compaction', 'Compacting the conversation: older messages will be summarised.');
    case 'compaction-applied':
      return notice({ ...s, status: { ...s.status, contextTokens: 0 } }, 'compaction', 'Conversation compacted (the full history stays stored).');
    case 'slice-finished': {
      const { completionSince: _, silentSince: __, ...next } = flushLive(s);
      return { ...next, busy: false, status: { ...next.status, contextTokens: e.contextTokens } };
    }
    case 'error':
      return notice(flushLive(s), 'error', e.message);
    case 'input-accepted':
    case 'input-deferred':
    case 'input-dropped':
    case 'thread-closed':
    case 'tool-call-streaming':
    case 'tool-denied':
    case 'tool-dispatched':
    case 'turn-committed':
      return s;
  }
}

/** Children don't stream into the transcript: their row says what they are doing. */
function reduceChild(s: UiState, e: RuntimeEvent, now?: number): UiState {
  const id = e.threadId;
  switch (e.type) {
    case 'slice-started':
      return updateThread(s, id, (t) => ({ ...t, working: true, outcome: undefined }));
    case 'tool-call': {
      const display = e.display ?? e.call.name;
      const next = updateThread(s, id, (t) => ({ ...t, tool: display }));
      return { ...next, running: [...next.running, runningRow(e, display, now)] };
    }
    case 'tool-progress':
      return progress(s, e);
    case 'event-injected':
      return e.final ? endBackground(s, id, e.originalCallId) : s;
    case 'tool-result':
    case 'tool-interrupted': {
      const callId = e.type === 'tool-result' ? e.toolUseId : e.callId;
      const moved = e.type === 'tool-result' && e.subscription ? toBackground(s, id, callId) : s;
      // A child inherits its spawn call (and gets its instructions as that call's result): the
      // same call id as the parent's running row, so match the thread too.
      const next = { ...moved, running: moved.running.filter((r) => r.callId !== callId || r.threadId !== id) };
      return updateThread(next, id, (t) => ({ ...t, tool: undefined }));
    }
    case 'thread-spawned':
      return spawned(s, e);
    case 'slice-finished': {
      const outcome = e.outcome === 'completed' ? 'idle' : e.outcome === 'awaiting-tool' ? undefined : e.outcome;
      return updateThread(s, id, ({ waiting: _, ...t }) => ({ ...t, working: false, ...(outcome ? { outcome } : {}), ...(e.waiting ? { waiting: e.waiting } : {}) }));
    }
    case 'thread-closed':
      return {
        ...s,
        threads: s.threads.filter((t) => t.id !== id),
        closedThreads: [...s.closedThreads, id].slice(-CLOSED_KEPT),
        running: s.running.filter((r) => r.threadId !== id),
        background: s.background.filter((b) => b.threadId !== id),
      };
    case 'error': {
      const label = s.threads.find((t) => t.id === id)?.label ?? shortId(id);
      return notice(s, 'error', `[${label}] ${e.message}`);
    }
    case 'compaction-applied':
    case 'compaction-started':
    case 'completion-finished':
    case 'completion-retry':
    case 'completion-silence':
    case 'completion-started':
    case 'input-accepted':
    case 'input-deferred':
    case 'input-dropped':
    case 'text-delta':
    case 'thinking-delta':
    case 'tool-call-streaming':
    case 'tool-denied':
    case 'tool-dispatched':
    case 'turn-committed':
      return s;
  }
}

/** Events of a thread we never saw spawned (a resumed session) still get a row. */
function knowThread(s: UiState, id: string): UiState {
  if (s.threads.some((t) => t.id === id)) return s;
  const t: ChildThread = { id, parentId: s.rootThreadId, kind: 'child', label: `thread ${shortId(id)}`, depth: 1, working: false };
  return { ...s, threads: [...s.threads, t] };
}

function runningRow(e: Extract<RuntimeEvent, { type: 'tool-call' }>, display: string, now: number | undefined): RunningTool {
  const row: RunningTool = { callId: e.call.id, name: e.call.name, threadId: e.threadId, display, sync: e.sync, tail: [], ...(now !== undefined && { startedAt: now }) };
  return e.passive ? { ...row, passive: true } : row;
}

function spawned(s: UiState, e: Extract<RuntimeEvent, { type: 'thread-spawned' }>): UiState {
  const parentDepth = e.threadId === s.rootThreadId ? 0 : (s.threads.find((t) => t.id === e.threadId)?.depth ?? 1);
  const call = s.running.find((r) => r.callId === e.spawnCallId && r.threadId === e.threadId);
  let label: string;
  if (e.kind === 'child') {
    label = taskLabel(e.task) ?? `thread ${shortId(e.childId)}`;
  } else if (e.kind === 'event') {
    label = `event of ${s.rootCalls[e.spawnCallId] ?? call?.display ?? shortId(e.spawnCallId)}`;
  } else {
    label = 'compaction';
  }
  const known = { id: e.childId, parentId: e.threadId, kind: e.kind, label, depth: parentDepth + 1 };
  // The child may have started before this event reached us: keep what its row already shows.
  if (s.threads.some((t) => t.id === e.childId)) return updateThread(s, e.childId, (t) => ({ ...t, ...known }));
  return { ...s, threads: [...s.threads, { ...known, working: false }] };
}

function injected(s: UiState, e: Extract<RuntimeEvent, { type: 'event-injected' }>): UiState {
  const next = flushLive(s);
  if (e.source === 'report') {
    // The child may be gone from the rows already (it closed with this report): its task names it.
    const child = e.childThreadId ? next.threads.find((t) => t.id === e.childThreadId) : undefined;
    const eventOf = e.report?.from === 'event' ? next.rootCalls[e.originalCallId] : undefined;
    const from =
      taskLabel(e.task) ??
      child?.label ??
      (eventOf ? `event of ${eventOf}` : e.childThreadId ? `thread ${shortId(e.childThreadId)}` : 'a child thread');
    // The review itself happened before delivery (the controller's report reviewer); the
    // attachment is the reviewed diff, shown here as a summary.
    const diff = isReviewDiff(e.attachment) && e.attachment.files.length > 0 ? e.attachment : undefined;
    return pushItem(next, {
      kind: 'report',
      from,
      text: reportText(e.report, e.content),
      ...(e.report?.closed ? { closed: true } : {}),
      ...(diff ? { diffStat: diffStat(diff) } : {}),
    });
  }
  const source = next.rootCalls[e.originalCallId] ?? (e.source === 'parent' ? 'parent' : 'event');
  return pushItem(next, { kind: 'event', source, ...eventLines(e.display, e.message === undefined ? e.content : [{ type: 'text', text: e.message }]) });
}

/** Output of a running call: its live tail; a background command's last word ends its row. */
function progress(s: UiState, e: Extract<RuntimeEvent, { type: 'tool-progress' }>): UiState {
  const same = (r: { callId: string; threadId: string }) => r.callId === e.callId && r.threadId === e.threadId;
  if (s.running.some(same)) {
    const ended = e.final === true;
    return { ...s, running: s.running.map((r) => (same(r) ? { ...r, tail: addTail(r.tail, e.text), ...(ended ? { ended } : {}) } : r)) };
  }
  if (e.final) return endBackground(s, e.threadId, e.callId);
  if (!s.background.some(same)) return s;
  return { ...s, background: s.background.map((b) => (same(b) ? { ...b, tail: addTail(b.tail, e.text) } : b)) };
}

/** The call answered "still running": it leaves the running rows for the background list. */
function toBackground(s: UiState, threadId: string, callId: string): UiState {
  const call = s.running.find((r) => r.callId === callId && r.threadId === threadId);
  // Ended already (its result reached the thread after the command was over): nothing runs.
  if (!call || call.ended || s.background.some((b) => b.callId === callId && b.threadId === threadId)) return s;
  const started = call.startedAt === undefined ? {} : { startedAt: call.startedAt };
  return { ...s, background: [...s.background, { callId, threadId, display: call.display, tail: call.tail, ...started }] };
}

function endBackground(s: UiState, threadId: string, callId: string): UiState {
  const rest = s.background.filter((b) => b.callId !== callId || b.threadId !== threadId);
  return rest.length === s.background.length ? s : { ...s, background: rest };
}

function finishTool(s: UiState, callId: string, status: 'ok' | 'error' | 'interrupted', shown: ReturnType<typeof finishedCall>): UiState {
  const call = s.running.find((r) => r.callId === callId && r.threadId === s.rootThreadId);
  // Unknown: already ended on screen (the user's message interrupted it), or before this UI started.
  if (!call) return s;
  const next = { ...s, running: s.running.filter((r) => r !== call) };
  const { title, ...rest } = shown;
  return pushItem(next, { kind: 'tool', display: title ?? call.display, status, ...rest });
}

/** Each completion is priced with the model it ran on (a /model switch, a child on another model). */
function completionUsage(s: UiState, e: Extract<RuntimeEvent, { type: 'completion-finished' }>): UiState {
  const cost = s.pricing.cost(e.model, e.usage);
  return {
    ...s,
    status: {
      ...s.status,
      usage: addUsage(s.status.usage, e.usage),
      ...(cost === undefined ? { costPartial: true } : { cost: (s.status.cost ?? 0) + cost }),
    },
  };
}

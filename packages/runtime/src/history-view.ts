import { summaryRecord } from './compaction-record.js';
import type { HistoryMessage } from './messages.js';
import { isThinking, text } from './messages.js';
import type { CompactionSummary, ThreadKind } from './store.js';
import { frameSummary } from './wording.js';

/** What the view needs to know of a thread; both stores answer it synchronously. */
export interface ViewThread {
  /** Root first, this thread last. */
  stack: readonly string[];
  kind: ThreadKind;
  parentId: string | null;
  /** The parent's call it hangs off (a child's spawn call); null for a root. */
  spawnCallId: string | null;
  /** The parent's own messages [0, cutoff) are inherited. */
  cutoff: number;
  /** How many summaries the parent had when this thread was spawned. */
  parentSummaries: number;
}

export interface ViewSource {
  thread(id: string): ViewThread | undefined;
  ownMessages(id: string): HistoryMessage[];
  summaries(id: string): CompactionSummary[];
}

export interface View {
  history: HistoryMessage[];
  ownOffset: number;
  ownFrom: number;
}

/**
 * A summary stands for the history it replaces, which may have held the owner's identity line (a
 * child's spawn result): the owner's line goes last, so the model still knows which thread it is.
 * `record` is the verbatim part the runtime keeps with it (compaction-record.ts).
 */
export function summaryMessage(summary: string, ownerStack: readonly string[], record = ''): HistoryMessage {
  return {
    role: 'user',
    content: [text(frameSummary(summary, ownerStack, record))],
  };
}

/**
 * The summary message of `owner`'s summary and the own message its view goes on from. A summary
 * stored before kept turns existed is shown as it always was (no record, nothing kept before
 * `upTo`): turns made after it carry thinking bound to those exact bytes.
 */
function summaryStart(src: ViewSource, owner: string, stack: readonly string[], s: CompactionSummary, own: readonly HistoryMessage[]) {
  if (s.keepFrom === undefined) return { message: summaryMessage(s.text, stack), from: s.upTo };
  const from = Math.min(s.keepFrom, s.upTo);
  return { message: summaryMessage(s.text, stack, summaryRecord(src, owner, from, own)), from };
}

/**
 * What a thread's model sees: its own latest summary plus what follows it, or else what it
 * inherited plus all its own messages. A child inherits its parent's view *as it was when the
 * child was spawned* (the parent's summaries made later don't apply), cut at the spawn point, so a
 * child always rebuilds exactly what it inherited; nothing stored is ever deleted.
 */
export function buildView(src: ViewSource, threadId: string): View {
  const own = src.ownMessages(threadId);
  const latest = src.summaries(threadId).findLast((s) => s.appliedAt !== undefined);
  if (latest) {
    const stack = src.thread(threadId)?.stack ?? [threadId];
    const { message, from } = summaryStart(src, threadId, stack, latest, own);
    const applied = Math.max(from, latest.appliedAt!);
    const kept = [...withoutThinking(own.slice(from, applied)), ...own.slice(applied)];
    return { history: [message, ...kept], ownOffset: 1, ownFrom: from };
  }
  const prefix = inherited(src, threadId);
  return { history: prefix.concat(own), ownOffset: prefix.length, ownFrom: 0 };
}

function inherited(src: ViewSource, threadId: string): HistoryMessage[] {
  const t = src.thread(threadId);
  if (!t || t.parentId === null) return [];
  const parentOwn = src.ownMessages(t.parentId).slice(0, t.cutoff);
  const summary = t.parentSummaries > 0 ? src.summaries(t.parentId)[t.parentSummaries - 1] : undefined;
  if (summary && summary.upTo <= t.cutoff) {
    // Whether or when the parent switched to it, the child's copy never changes: none of the
    // parent's thinking after a summary is kept (it was bound to what the summary replaced).
    const { message, from } = summaryStart(src, t.parentId, t.stack.slice(0, -1), summary, parentOwn);
    return [message, ...withoutThinking(parentOwn.slice(from))];
  }
  return inherited(src, t.parentId).concat(parentOwn);
}

/**
 * Turns kept after a summary but made before it: their thinking blocks were signed against the
 * history the summary replaced, which the API would refuse, so they go (the API's own advice
 * for client-side compaction). A turn left with nothing says so: the view keeps one message per
 * stored one (safePoint and spawn cut-offs count them). Everything made after the switch is sent
 * back as it came.
 */
function withoutThinking(messages: readonly HistoryMessage[]): HistoryMessage[] {
  return messages.map((m) => {
    if (!m.content.some(isThinking)) return m;
    const content = m.content.filter((b) => !isThinking(b));
    return { role: m.role, content: content.length > 0 ? content : [text(THINKING_ONLY)] };
  });
}

const THINKING_ONLY = '(This reply held only thinking, left out after the summary.)';

/**
 * The largest own-message count k such that own[ownFrom..k) leaves no tool call without its
 * result: where a compaction may cut, or an event child may branch off.
 */
export function safePoint(view: View, ownCount: number): number {
  let open = 0;
  let safe = view.ownFrom;
  const pending = new Set<string>();
  for (let i = view.ownOffset; i < view.history.length; i++) {
    for (const block of view.history[i].content) {
      if (block.type === 'tool_use') pending.add(block.id);
      else if (block.type === 'tool_result') pending.delete(block.tool_use_id);
    }
    open = pending.size;
    if (open === 0) safe = view.ownFrom + (i - view.ownOffset) + 1;
  }
  return Math.min(safe, ownCount);
}

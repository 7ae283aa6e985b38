// The verbatim record a compaction summary carries: the user's own messages (and a child's task),
// collected by the runtime from the stored history, so that what the user asked survives any
// number of compactions whatever the summarising model wrote.
import type { ViewSource } from './history-view.js';
import type { HistoryMessage } from './messages.js';
import { resultText } from './messages.js';
import { withoutStackLine } from './thread-identity.js';
import { COMPACTION_PHRASES, frameRecord, STOP_PHRASES, type SummaryRecord } from './wording.js';

/** Characters a user message keeps before its middle is cut (its start and end stay). */
export const MESSAGE_MAX_CHARS = 10_000;
/** Characters of user messages a record holds at most (~8k tokens), beyond the first message. */
export const MESSAGES_MAX_CHARS = 30_000;

/** What the runtime itself writes as a user turn: never the user's words. */
const RUNTIME_TEXTS: ReadonlySet<string> = new Set(Object.values(STOP_PHRASES));

/**
 * The user's typed text in a stored message: a user turn made of text alone (tool results,
 * injected events and children's reports are tool results), and not a request of the runtime.
 */
export function userTextOf(m: HistoryMessage): string | undefined {
  if (m.role !== 'user' || m.content.length === 0 || !m.content.every((b) => b.type === 'text')) return undefined;
  const value = m.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
  return RUNTIME_TEXTS.has(value) ? undefined : value;
}

/**
 * The record of a summary of `threadId` that keeps its own messages from `keepFrom` on: the
 * user's messages before that point, its inherited ones included (a child saw them), and a
 * child's task. Built from stored messages only, which never change: the same bytes every load.
 */
export function summaryRecord(src: ViewSource, threadId: string, keepFrom: number, own: readonly HistoryMessage[] = src.ownMessages(threadId)): string {
  const texts = userTextsBefore(src, threadId, keepFrom, own);
  return frameRecord({ ...taskOf(src, threadId, own, keepFrom), ...bounded(texts) });
}

function userTextsBefore(src: ViewSource, threadId: string, upTo: number, own: readonly HistoryMessage[]): string[] {
  const t = src.thread(threadId);
  const inherited = t && t.parentId !== null ? userTextsBefore(src, t.parentId, t.cutoff, src.ownMessages(t.parentId)) : [];
  return inherited.concat(own.slice(0, upTo).flatMap((m) => userTextOf(m) ?? []));
}

/**
 * A child's instructions came as its spawn call's result, its first own message: a tool result,
 * so no user message. Kept when that message is summarised away (the identity line in it goes:
 * the summary ends with the owner's own).
 */
function taskOf(src: ViewSource, threadId: string, own: readonly HistoryMessage[], keepFrom: number): Pick<SummaryRecord, 'task'> {
  const t = src.thread(threadId);
  if (t?.kind !== 'child' || keepFrom === 0) return {};
  for (const b of own[0]?.content ?? []) {
    if (b.type === 'tool_result' && b.tool_use_id === t.spawnCallId) return { task: clip(withoutStackLine(resultText(b.content))) };
  }
  return {};
}

/**
 * The messages within the bound: all of them when they fit, else the first (usually the task)
 * and as many of the latest as fit, saying how many between were left out. A message too long
 * on its own keeps its start and its end.
 */
export function bounded(texts: readonly string[]): Pick<SummaryRecord, 'first' | 'leftOut' | 'latest'> {
  const clipped = texts.map(clip);
  const size = clipped.reduce((n, t) => n + t.length, 0);
  if (clipped.length <= 2 || size <= MESSAGES_MAX_CHARS) return { first: clipped, leftOut: 0, latest: [] };
  const latest: string[] = [];
  let room = MESSAGES_MAX_CHARS;
  for (let i = clipped.length - 1; i > 0; i--) {
    // The latest message is kept whatever its size (clip bounds it).
    if (latest.length > 0 && clipped[i].length > room) break;
    latest.unshift(clipped[i]);
    room -= clipped[i].length;
  }
  return { first: clipped.slice(0, 1), leftOut: clipped.length - 1 - latest.length, latest };
}

function clip(text: string): string {
  if (text.length <= MESSAGE_MAX_CHARS) return text;
  const half = Math.floor(MESSAGE_MAX_CHARS / 2);
  const cut = text.length - 2 * half;
  return `${text.slice(0, half)}\n${COMPACTION_PHRASES.charactersLeftOut.replace('{count}', String(cut))}\n${text.slice(-half)}`;
}

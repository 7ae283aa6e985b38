import type { HistoryMessage, ResultContent, ToolDisplay } from '@infinity-code/runtime';
// The light subpaths: the UI's first frame must not wait for SQLite and the rest of the runtime.
import { readHistory, type HistoryEntry } from '@infinity-code/runtime/history-reading';
import { splitAttachments } from '../mentions.js';
import { truncate } from './format.js';
import { eventLines, finishedCall, reportText, taskLabel } from './item-data.js';
import { pushItem, type UiState } from './ui-state.js';

type ToolEntry = Extract<HistoryEntry, { kind: 'tool' }>;
type InjectedEntry = Extract<HistoryEntry, { kind: 'injected' }>;

/**
 * The transcript of a resumed session, rebuilt from the root thread's stored history as the
 * runtime reads it (the same items live events would have produced: messages, tool rows, reports
 * and command output). Pure: the store's history in, UI items out.
 */
export function replayHistory(
  s: UiState,
  history: readonly HistoryMessage[],
  displays: Readonly<Record<string, string>> = {},
  results: Readonly<Record<string, ToolDisplay>> = {},
): UiState {
  // Display lines of the calls so far, to name the output of their subscriptions.
  const calls = new Map<string, string>();
  let next = s;
  for (const entry of readHistory(history)) {
    switch (entry.kind) {
      case 'user': {
        // As typed: the files it attached are named, not shown again.
        const { typed, attached } = splitAttachments(entry.text);
        next = pushItem(next, { kind: 'user', text: typed });
        if (attached.length > 0) next = pushItem(next, { kind: 'notice', level: 'info', text: `attached ${attached.join(', ')}` });
        break;
      }
      case 'assistant':
      case 'thinking':
        next = pushItem(next, { kind: entry.kind, text: entry.text });
        break;
      case 'summary':
        next = pushItem(next, { kind: 'notice', level: 'compaction', text: 'Earlier conversation summarised.' });
        break;
      case 'tool': {
        // Display lines aren't stored: the tool's line for the call when the session knows the
        // tool, else the same fallback as a live call without one.
        const display = displays[entry.call.id] ?? `${entry.call.name} ${truncate(JSON.stringify(entry.call.input), 80)}`;
        calls.set(entry.call.id, display);
        // As a live row: the tool's title, when its result gave one, names the call.
        const { title, ...shown } = outcome(entry, results[entry.call.id]);
        next = pushItem(next, { kind: 'tool', display: title ?? display, ...shown });
        break;
      }
      case 'injected':
        next = injected(next, entry, calls);
        break;
    }
  }
  return next;
}

function outcome(entry: ToolEntry, shown: ToolDisplay | undefined): { status: 'ok' | 'error' | 'interrupted'; summary: string; title?: string; diff?: string; output?: string[] } {
  if (!entry.result) return { status: 'interrupted', summary: 'no result (interrupted)' };
  switch (entry.ended) {
    case 'interrupted':
      return { status: 'interrupted', summary: 'ended by your message' };
    case 'woken':
      return { status: 'ok', summary: 'woken by an event or a message' };
    case 'restart':
      return { status: 'interrupted', summary: 'interrupted by a restart' };
    default:
      // A spawn's result is worded for the model: say what the live row said.
      if (entry.spawned !== undefined) return { status: 'ok', summary: `started thread ${entry.spawned}` };
      return { status: entry.result.isError ? 'error' : 'ok', ...finishedCall(shown, entry.result.content) };
  }
}

function injected(s: UiState, entry: InjectedEntry, calls: ReadonlyMap<string, string>): UiState {
  const source = calls.get(entry.originalCallId) ?? entry.originalToolName;
  if (entry.source === 'report') {
    const from = taskLabel(entry.task) ?? (entry.report?.from === 'event' ? `event of ${source}` : 'a child thread');
    return pushItem(s, {
      kind: 'report',
      from,
      text: reportText(entry.report, entry.content),
      ...(entry.report?.closed ? { closed: true } : {}),
    });
  }
  const shown = entry.message === undefined ? entry.content : [{ type: 'text' as const, text: entry.message }];
  return pushItem(s, { kind: 'event', source: entry.source === 'parent' ? 'parent' : source, ...eventLines(undefined, shown) });
}


/**
 * What the tools give UIs for the finished calls in `history` that `read` can read back from
 * their stored results (the model's text, a file's `<file …>` excerpt, is not for the
 * transcript), by call id (see replayHistory).
 */
export function resultDisplays(
  history: readonly HistoryMessage[],
  read: (call: { name: string; input: Record<string, unknown> }, result: { content: readonly ResultContent[]; isError: boolean }) => ToolDisplay | undefined,
): Record<string, ToolDisplay> {
  const calls = new Map<string, { name: string; input: Record<string, unknown> }>();
  const out: Record<string, ToolDisplay> = {};
  for (const m of history) {
    for (const b of m.content) {
      if (b.type === 'tool_use') calls.set(b.id, b);
      if (b.type !== 'tool_result') continue;
      const call = calls.get(b.tool_use_id);
      const shown = call && read(call, { content: b.content, isError: b.is_error === true });
      if (shown) out[b.tool_use_id] = shown;
    }
  }
  return out;
}

/** The display line of every call in `history` that `display` knows, by call id (see replayHistory). */
export function callDisplays(
  history: readonly HistoryMessage[],
  display: (call: { name: string; input: Record<string, unknown> }) => string | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of history) {
    for (const b of m.content) {
      if (b.type !== 'tool_use') continue;
      const line = display(b);
      if (line !== undefined) out[b.id] = line;
    }
  }
  return out;
}

import type { HistoryMessage, ResultContent, ToolUseBlock } from './messages.js';
import { resultText } from './messages.js';
import {
  INJECTED_TOOL_NAME,
  INTERRUPTED_BY_RESTART,
  INTERRUPTED_BY_USER,
  readParentMessage,
  readReport,
  readSpawned,
  readSummary,
  WOKEN_BY_INPUT,
  type InjectedReport,
} from './wording.js';

/** The name of the built-in whose calls children's reports and parents' messages arrive on. */
const SPAWN_TOOL_NAME = 'spawn_thread';

/**
 * One thing a stored history holds, as a UI would show it. The same information the live events
 * carry (event-injected's source, report and message; tool-interrupted's passive), for a UI that
 * rebuilds a transcript from the store (a resumed session) without knowing how the runtime words
 * things for the model.
 */
export type HistoryEntry =
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string }
  /** The model's progress notes (a thinking block with text; empty ones are not entries). */
  | { kind: 'thinking'; text: string }
  /** A compaction summary standing for the older history (the start of a view). */
  | { kind: 'summary'; text: string }
  | {
      kind: 'tool';
      call: ToolUseBlock;
      /** Absent while the call waits (or its batch does: results join history together). */
      result?: { content: ResultContent[]; isError: boolean };
      /**
       * How the call ended, when not by its own answer: `interrupted` by the user's message,
       * `woken` (a wait that new input ended, as waits are meant to end), or by a `restart`.
       */
      ended?: 'interrupted' | 'woken' | 'restart';
      /** A `spawn_thread` call that started a child: the child's id. */
      spawned?: string;
    }
  | {
      kind: 'injected';
      source: 'event' | 'report' | 'parent';
      /** The synthetic call's id. */
      injectedId: string;
      /** The call the event belongs to (a subscription's, or a child's spawn call). */
      originalCallId: string;
      originalToolName: string;
      /** What the model read. */
      content: ResultContent[];
      report?: InjectedReport;
      message?: string;
      /** A report or message on a spawn call: the instructions that child was given. */
      task?: string;
    };

/**
 * A thread's history (as `loadThread` returns it) read as entries, in order. Tool results are
 * folded into their calls; an injected call and its result are one entry.
 */
export function readHistory(history: readonly HistoryMessage[]): HistoryEntry[] {
  const results = new Map<string, { content: ResultContent[]; isError: boolean }>();
  for (const m of history) {
    for (const b of m.content) {
      if (b.type === 'tool_result') results.set(b.tool_use_id, { content: b.content, isError: b.is_error === true });
    }
  }
  const out: HistoryEntry[] = [];
  history.forEach((m, i) => {
    for (const b of m.content) {
      if (b.type === 'text') {
        if (b.text.trim() === '') continue;
        if (m.role === 'assistant') {
          out.push({ kind: 'assistant', text: b.text });
          continue;
        }
        // A view holds at most one summary, first: anything later is the user's own text.
        const summary = i === 0 ? readSummary(b.text) : undefined;
        out.push(summary === undefined ? { kind: 'user', text: b.text } : { kind: 'summary', text: summary });
      } else if (b.type === 'thinking') {
        if (b.thinking.trim() !== '') out.push({ kind: 'thinking', text: b.thinking });
      } else if (b.type === 'tool_use') {
        const result = results.get(b.id);
        out.push(b.name === INJECTED_TOOL_NAME ? injected(b, result?.content ?? []) : tool(b, result));
      }
    }
  });
  return out;
}

function tool(call: ToolUseBlock, result: { content: ResultContent[]; isError: boolean } | undefined): HistoryEntry {
  if (!result) return { kind: 'tool', call };
  const text = resultText(result.content);
  const ended = endedBy(text);
  if (ended) return { kind: 'tool', call, result, ended };
  const spawned = call.name === SPAWN_TOOL_NAME && !result.isError ? readSpawned(text) : undefined;
  return spawned === undefined ? { kind: 'tool', call, result } : { kind: 'tool', call, result, spawned };
}

function endedBy(text: string): 'interrupted' | 'woken' | 'restart' | undefined {
  if (text === INTERRUPTED_BY_USER) return 'interrupted';
  if (text === WOKEN_BY_INPUT) return 'woken';
  if (text === INTERRUPTED_BY_RESTART) return 'restart';
  return undefined;
}

function injected(call: ToolUseBlock, content: ResultContent[]): HistoryEntry {
  const originalToolName = typeof call.input.original_tool_name === 'string' ? call.input.original_tool_name : 'unknown';
  const originalCallId = typeof call.input.original_tool_call_id === 'string' ? call.input.original_tool_call_id : '';
  const args = call.input.original_args as Record<string, unknown> | undefined;
  const base = { kind: 'injected' as const, injectedId: call.id, originalCallId, originalToolName, content };
  const onSpawn = originalToolName === SPAWN_TOOL_NAME;
  const task = onSpawn && typeof args?.instructions === 'string' ? { task: args.instructions } : {};
  const text = resultText(content);
  // An event thread's report arrives on the subscription's call, so the framing tells reports apart.
  const report = readReport(text);
  if (report) return { ...base, source: 'report', report, ...task };
  const message = onSpawn ? readParentMessage(text) : undefined;
  if (message !== undefined) return { ...base, source: 'parent', message, ...task };
  // On a spawn call, whatever the framing: a report worded by an older version.
  if (onSpawn) return { ...base, source: 'report', report: { text, closed: false, from: 'child' }, ...task };
  return { ...base, source: 'event' };
}

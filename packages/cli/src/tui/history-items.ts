import type { HistoryMessage } from '@infinity-code/runtime';
import { pushItem, type UiState } from './ui-state.js';

const INJECTED = 'receive_event__injected';
const SUMMARY = '[Summary of the conversation so far]';

function textOf(content: Array<{ type: string; text?: string }>): string {
  return content.map((c) => (c.type === 'text' ? (c.text ?? '') : '[image]')).join('\n');
}

function firstLine(s: string): string {
  const line = s.trim().split('\n')[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

/**
 * The transcript of a resumed session, rebuilt from the root thread's stored history (the same
 * items live events would have produced: messages, tool rows, reports and command output).
 * Pure: the store's history in, UI items out.
 */
export function replayHistory(s: UiState, history: readonly HistoryMessage[]): UiState {
  const results = new Map<string, { text: string; isError: boolean }>();
  for (const m of history) {
    for (const b of m.content) {
      if (b.type === 'tool_result') results.set(b.tool_use_id, { text: textOf(b.content), isError: b.is_error === true });
    }
  }
  let next = s;
  for (const m of history) {
    for (const b of m.content) {
      if (b.type === 'text' && b.text.trim() !== '') {
        if (m.role === 'user' && b.text.startsWith(SUMMARY)) {
          next = pushItem(next, { kind: 'notice', level: 'compaction', text: 'Earlier conversation summarised.' });
        } else if (m.role === 'user') {
          next = pushItem(next, { kind: 'user', text: b.text.replace(/^<interrupt>/, '') });
        } else {
          next = pushItem(next, { kind: 'assistant', text: b.text });
        }
      } else if (b.type === 'tool_use') {
        const result = results.get(b.id);
        if (b.name === INJECTED) {
          const original = String(b.input.original_tool_name ?? 'event');
          const text = result?.text ?? '';
          next =
            original === 'spawn_thread'
              ? pushItem(next, { kind: 'report', from: String(b.input.original_tool_call_id ?? ''), text })
              : pushItem(next, { kind: 'event', source: original, lines: text.trim().split('\n').slice(-5) });
          continue;
        }
        next = pushItem(next, {
          kind: 'tool',
          display: `${b.name} ${JSON.stringify(b.input)}`.slice(0, 120),
          summary: result ? firstLine(result.text) : 'no result (interrupted)',
          status: !result ? 'interrupted' : result.isError ? 'error' : 'ok',
        });
      }
    }
  }
  return next;
}

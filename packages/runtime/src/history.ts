import type { HistoryMessage, ResultContent } from './messages.js';
import { text } from './messages.js';

/**
 * The messages sent to the model. Stored history is append-only, so an interrupted call's result
 * and the user text after it are two user rows; the API wants one user message, tool results
 * first. Most histories need no merge, and then the stored array is sent as is.
 */
export function toRequestMessages(history: readonly HistoryMessage[]): readonly HistoryMessage[] {
  let needsMerge = false;
  for (let i = 1; i < history.length; i++) {
    if (history[i].role === history[i - 1].role) {
      needsMerge = true;
      break;
    }
  }
  if (!needsMerge) return history;
  const out: HistoryMessage[] = [];
  for (const m of history) {
    const last = out[out.length - 1];
    if (last && last.role === m.role) {
      out[out.length - 1] = { role: m.role, content: [...last.content, ...m.content] };
    } else {
      out.push(m);
    }
  }
  return out;
}

export function userTextMessage(value: string): HistoryMessage {
  return { role: 'user', content: [text(value)] };
}

export function toolResultMessage(
  toolUseId: string,
  content: ResultContent[],
  isError: boolean,
): HistoryMessage {
  return {
    role: 'user',
    content: [
      isError
        ? { type: 'tool_result', tool_use_id: toolUseId, content, is_error: true }
        : { type: 'tool_result', tool_use_id: toolUseId, content },
    ],
  };
}

export function asResultContent(content: string | ResultContent[]): ResultContent[] {
  return typeof content === 'string' ? [text(content)] : content;
}

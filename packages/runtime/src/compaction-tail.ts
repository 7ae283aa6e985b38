// Which of the latest turns a compaction keeps as they were, after the summary: the model goes on
// from its own recent words and tool output rather than from a retelling of them.
import type { View } from './history-view.js';
import type { ContentBlock, HistoryMessage } from './messages.js';

/** Share of the summarised history the kept turns may take... */
export const TAIL_SHARE = 0.3;
/** ...and at most this many characters (~12k tokens), whatever the context window. */
export const TAIL_MAX_CHARS = 48_000;
/**
 * A history shorter than this (~1k tokens) is summarised whole: the summary and the user's
 * messages kept with it are about its size already.
 */
export const TAIL_MIN_HISTORY_CHARS = 4_000;
/** What an image counts for (it costs ~1.5k tokens, whatever its base64 length). */
const IMAGE_CHARS = 6_000;

/**
 * The own-message index from which `view`'s thread keeps its messages verbatim when a summary
 * is written from its messages before `cutoff`; `cutoff` itself when it keeps none.
 *
 * The kept turns must make a valid request behind the summary (a user message): they start
 * where no tool call is waiting for its result and not with a tool result, so every result
 * still follows its call. Within the budget, they start with a user's message (whole exchanges)
 * if one fits, else with a reply of the model (the end of one long exchange, whose request the
 * record keeps).
 */
export function keptTailStart(view: View, cutoff: number): number {
  const end = view.ownOffset + (cutoff - view.ownFrom);
  if (cutoff <= view.ownFrom || end > view.history.length) return cutoff;
  const sizes = view.history.slice(0, end).map(messageChars);
  const total = sizes.reduce((n, s) => n + s, 0);
  if (total < TAIL_MIN_HISTORY_CHARS) return cutoff;
  const budget = Math.min(TAIL_MAX_CHARS, total * TAIL_SHARE);

  let kept = total - sizes.slice(0, view.ownOffset).reduce((n, s) => n + s, 0);
  let fromReply: number | undefined;
  const waiting = new Set<string>();
  for (let i = view.ownOffset; i < end; i++) {
    const m = view.history[i];
    const clean = waiting.size === 0 && !m.content.some((b) => b.type === 'tool_result');
    if (clean && kept <= budget) {
      const at = view.ownFrom + (i - view.ownOffset);
      if (m.role === 'user') return at;
      fromReply ??= at;
    }
    for (const b of m.content) {
      if (b.type === 'tool_use') waiting.add(b.id);
      else if (b.type === 'tool_result') waiting.delete(b.tool_use_id);
    }
    kept -= sizes[i];
  }
  return fromReply ?? cutoff;
}

/** A message's size in characters, as the model will read it (thinking in kept turns is dropped). */
export function messageChars(m: HistoryMessage): number {
  return m.content.reduce((n, b) => n + blockChars(b), 0);
}

function blockChars(b: ContentBlock): number {
  switch (b.type) {
    case 'text':
      return b.text.length;
    case 'image':
      return IMAGE_CHARS;
    case 'tool_use':
      return b.name.length + JSON.stringify(b.input).length;
    case 'tool_result':
      return b.content.reduce((n, c) => n + (c.type === 'text' ? c.text.length : IMAGE_CHARS), 0);
    default:
      return 0;
  }
}

import type { HistoryMessage } from './messages.js';

// Where a request asks the Messages API to cache its prefix (at most 4 breakpoints per request).
// The prefix is rendered tools, system, messages; a marked block caches everything up to it.
// Placement must be byte-stable from one request to the next, so it depends only on the history.

export const EPHEMERAL = { type: 'ephemeral' } as const;

/**
 * The messages whose last block is marked (with the system prompt, 4 breakpoints at most):
 * - the message before the latest assistant reply: where the thread's previous request ended,
 *   read back from cache. For a child's first request that request was its parent's, so a child
 *   reads what it inherited from the parent's cache;
 * - the latest assistant reply: siblings started by one reply share everything up to it, so the
 *   first child to ask writes it and the others read it;
 * - the request's last message, written for the next request.
 */
export function markedMessages(messages: readonly HistoryMessage[]): number[] {
  const last = messages.length - 1;
  if (last < 0) return [];
  let reply = -1;
  for (let i = last; i >= 0; i--) {
    if (messages[i].role === 'assistant') {
      reply = i;
      break;
    }
  }
  return [...new Set([reply - 1, reply, last])].filter((i) => i >= 0);
}

/** The messages with cache_control on the last block of each marked one (others shared, not copied). */
export function withMessageBreakpoints(messages: readonly HistoryMessage[], marked: readonly number[]): HistoryMessage[] {
  const out = messages.slice();
  for (const i of marked) {
    const m = out[i];
    const content = m.content.slice();
    const lastBlock = content.length - 1;
    if (lastBlock < 0) continue;
    // A wire-only field: the stored history never holds it.
    content[lastBlock] = Object.assign({}, content[lastBlock], { cache_control: EPHEMERAL });
    out[i] = { ...m, content };
  }
  return out;
}

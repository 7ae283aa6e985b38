import { describe, expect, it } from 'vitest';
import { markedMessages, withMessageBreakpoints } from './cache-breakpoints.js';
import type { HistoryMessage } from './messages.js';

const user = (t: string): HistoryMessage => ({ role: 'user', content: [{ type: 'text', text: t }] });
const reply = (t: string): HistoryMessage => ({ role: 'assistant', content: [{ type: 'text', text: t }] });

describe('cache breakpoints on messages', () => {
  it('marks the end of the previous request (before the latest reply), the latest reply, and the last message', () => {
    expect(markedMessages([])).toEqual([]);
    expect(markedMessages([user('a')])).toEqual([0]);
    expect(markedMessages([user('a'), reply('b'), user('c')])).toEqual([0, 1, 2]);
    expect(markedMessages([user('a'), reply('b'), user('c'), reply('d'), user('e')])).toEqual([2, 3, 4]);
  });

  it('stays where the previous request put its end, so the next request reads exactly what this one wrote', () => {
    const history = [user('a'), reply('b'), user('c')];
    const next = [...history, reply('d'), user('e')];
    // This request's last mark (message 2) is the next request's first.
    expect(markedMessages(history).at(-1)).toBe(markedMessages(next)[0]);
  });

  it('adds cache_control on copies of the marked messages only, never on the stored history', () => {
    const history = [user('a'), reply('b'), user('c')];
    const before = JSON.stringify(history);
    const out = withMessageBreakpoints(history, [0, 2]);
    expect(JSON.stringify(history)).toBe(before);
    expect(out[1]).toBe(history[1]);
    expect(out[2].content.at(-1)).toEqual({ type: 'text', text: 'c', cache_control: { type: 'ephemeral' } });
  });
});

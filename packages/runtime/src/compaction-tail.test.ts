import { describe, expect, it } from 'vitest';
import { keptTailStart, messageChars, TAIL_MAX_CHARS, TAIL_MIN_HISTORY_CHARS, TAIL_SHARE } from './compaction-tail.js';
import type { View } from './history-view.js';
import type { HistoryMessage } from './messages.js';
import { validateMessagesRequest } from './testing/index.js';

const user = (t: string): HistoryMessage => ({ role: 'user', content: [{ type: 'text', text: t }] });
const reply = (t: string): HistoryMessage => ({ role: 'assistant', content: [{ type: 'text', text: t }] });
const call = (id: string, arg: string): HistoryMessage => ({
  role: 'assistant',
  content: [{ type: 'thinking', thinking: '', signature: 'sig' }, { type: 'tool_use', id, name: 'run', input: { arg } }],
});
const result = (id: string, out: string): HistoryMessage => ({
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text: out }] }],
});

/** One exchange: the user's message, a call, its result, the answer. */
function exchange(n: number, size: number): HistoryMessage[] {
  return [user(`task ${n}`), call(`c${n}`, 'a'.repeat(size)), result(`c${n}`, 'r'.repeat(size)), reply(`done ${n}`)];
}

const own = (history: HistoryMessage[]): View => ({ history, ownOffset: 0, ownFrom: 0 });
const size = (ms: readonly HistoryMessage[]) => ms.reduce((n, m) => n + messageChars(m), 0);

/** The summary (a user message) followed by the kept turns, as a request would send them. */
function keptRequestIsValid(history: HistoryMessage[], from: number): void {
  const kept = history.slice(from).map((m) => ({ role: m.role, content: m.content.filter((b) => b.type !== 'thinking') }));
  const messages: HistoryMessage[] = [user('summary')];
  for (const m of kept) {
    const last = messages.at(-1)!;
    if (last.role === m.role) messages[messages.length - 1] = { role: m.role, content: [...last.content, ...m.content] };
    else messages.push(m);
  }
  expect(validateMessagesRequest({ messages })).toBeUndefined();
}

describe('the turns a compaction keeps', () => {
  it('keeps none of a short history, which is summarised whole', () => {
    const history = exchange(1, 100);
    expect(size(history)).toBeLessThan(TAIL_MIN_HISTORY_CHARS);
    expect(keptTailStart(own(history), history.length)).toBe(history.length);
  });

  it('keeps the latest whole exchanges that fit in its share, starting at a user message', () => {
    const history = [1, 2, 3, 4, 5, 6, 7, 8].flatMap((n) => exchange(n, 600));
    const from = keptTailStart(own(history), history.length);
    expect(history[from]).toEqual(user('task 7'));
    const kept = size(history.slice(from));
    expect(kept).toBeLessThanOrEqual(size(history) * TAIL_SHARE);
    // One more exchange would not have fitted.
    expect(kept + size(exchange(4, 600))).toBeGreaterThan(size(history) * TAIL_SHARE);
    keptRequestIsValid(history, from);
  });

  it('keeps the end of one long exchange from a reply of the model, never from a result', () => {
    const history = [user('do it all'), ...[1, 2, 3, 4, 5, 6, 7, 8].flatMap((n) => [call(`c${n}`, 'a'.repeat(400)), result(`c${n}`, 'r'.repeat(400))]), reply('all done')];
    const from = keptTailStart(own(history), history.length);
    expect(from).toBeGreaterThan(0);
    expect(from).toBeLessThan(history.length);
    expect(history[from].role).toBe('assistant');
    expect(size(history.slice(from))).toBeLessThanOrEqual(size(history) * TAIL_SHARE);
    keptRequestIsValid(history, from);
  });

  it('never starts between a call and its result, even when the budget would', () => {
    // A reply with two big calls, answered in one small message: the answers alone would fit, but
    // without their calls they would answer nothing.
    const two: HistoryMessage = {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'p1', name: 'run', input: { arg: 'x'.repeat(5_000) } },
        { type: 'tool_use', id: 'p2', name: 'run', input: { arg: 'y'.repeat(5_000) } },
      ],
    };
    const answers: HistoryMessage = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'p1', content: [{ type: 'text', text: 'ok' }] },
        { type: 'tool_result', tool_use_id: 'p2', content: [{ type: 'text', text: 'ok' }] },
      ],
    };
    const history = [user('u'.repeat(1_000)), two, answers];
    expect(keptTailStart(own(history), history.length)).toBe(history.length);
  });

  it('is capped in characters, whatever the share', () => {
    const history = Array.from({ length: 40 }, (_, n) => exchange(n, 5_000)).flat();
    const from = keptTailStart(own(history), history.length);
    expect(size(history.slice(from))).toBeLessThanOrEqual(TAIL_MAX_CHARS);
    expect(size(history.slice(from))).toBeGreaterThan(0);
    expect(history[from].role).toBe('user');
  });

  it('counts in own messages after an earlier summary, and only keeps what follows it', () => {
    const ownMessages = [1, 2, 3, 4, 5, 6].flatMap((n) => exchange(n, 600));
    // The view of a thread summarised before: its own messages 10.. follow the summary message.
    const view: View = { history: [user('S'.repeat(500)), ...ownMessages.slice(10)], ownOffset: 1, ownFrom: 10 };
    const from = keptTailStart(view, 24);
    expect(from).toBeGreaterThanOrEqual(10);
    expect(ownMessages[from]).toEqual(user('task 6'));
  });

  it('keeps the messages before the cut-off only', () => {
    const history = [1, 2, 3, 4, 5, 6, 7, 8].flatMap((n) => exchange(n, 600));
    // Cut before the last exchange: the one before it is the latest that can be kept.
    expect(history[keptTailStart(own(history), 20)]).toEqual(user('task 5'));
    expect(keptTailStart(own(history), 0)).toBe(0);
  });
});

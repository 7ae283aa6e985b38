// The broker between the runtime's report reviewer and the TUI: a review the session's close
// interrupts is abandoned, whatever step it is at, so the close never waits on it.
import type { ThreadRecord } from '@infinity-code/runtime';
import { describe, expect, it } from 'vitest';
import { createReviewBroker } from './review-broker.js';

const child = { id: 'th_child', parentId: 'th_root' } as ThreadRecord;

describe('review broker', () => {
  it("abandons a review whose diff is still being made when the session closes (the diff may need what the close takes down)", async () => {
    let diffAsked = false;
    const broker = createReviewBroker({
      diffOf: () => {
        diffAsked = true;
        return new Promise(() => undefined);
      },
      apply: () => Promise.reject(new Error('never applied')),
    });
    const closing = new AbortController();
    const review = broker.reviewer(child, 'done', { signal: closing.signal, closed: true });
    expect(diffAsked).toBe(true);
    closing.abort();
    await expect(review).rejects.toThrow('the session closed before the review was decided');
    expect(broker.waiting()).toBe(0);
  });

  it('abandons at once when the session already closed, and passes a diff failure on', async () => {
    const closed = new AbortController();
    closed.abort();
    const broker = createReviewBroker({ diffOf: () => Promise.resolve(null), apply: () => Promise.reject(new Error('no')) });
    await expect(broker.reviewer(child, 'done', { signal: closed.signal, closed: true })).rejects.toThrow('session closed');
    const failing = createReviewBroker({ diffOf: () => Promise.reject(new Error('git failed')), apply: () => Promise.reject(new Error('no')) });
    await expect(failing.reviewer(child, 'done', { signal: new AbortController().signal, closed: true })).rejects.toThrow('git failed');
  });
});

// The broker between the runtime's report reviewer and the TUI: a review the session's close
// interrupts is abandoned, whatever step it is at, so the close never waits on it.
import type { ThreadRecord } from '@infinity-code/runtime';
import { describe, expect, it } from 'vitest';
import { ReviewChangedError, type ReviewDiff } from '../review-diff.js';
import type { ReviewRequest } from './controller.js';
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

  it("asks again, the child still waiting, when the child's changes moved after they were shown", async () => {
    const diffOf = (line: string): ReviewDiff => ({
      files: [{ path: 'a.txt', status: 'modified', hunks: [{ id: `a.txt#1:${line}`, header: '@@ -1 +1 @@', lines: ['-a', `+${line}`] }], decisionIds: [`a.txt#1:${line}`] }],
    });
    const [benign, rewritten] = [diffOf('benign'), diffOf('rewritten')];
    const applied: ReviewDiff[] = [];
    const broker = createReviewBroker({
      diffOf: () => Promise.resolve(benign),
      async apply(request) {
        if (request.diff === benign) throw new ReviewChangedError(['a.txt'], rewritten);
        applied.push(request.diff);
        return { message: 'Applied 1 file(s) to the parent sandbox.' };
      },
    });
    const next = requests(broker);
    const review = broker.reviewer(child, 'done', { signal: new AbortController().signal, closed: false });
    const first = await next();
    expect(first.diff).toBe(benign);

    await expect(broker.resolve(first.id, { accepted: ['a.txt#1:benign'], rejected: [] })).rejects.toThrow(
      'a.txt changed since you reviewed it: nothing was applied. Review it again as it is now.',
    );
    const again = await next();
    expect(again).toMatchObject({ kind: 'report', childThreadId: child.id, diff: rewritten });
    expect(broker.waiting()).toBe(1);

    await broker.resolve(again.id, { accepted: ['a.txt#1:rewritten'], rejected: [] });
    expect(applied).toEqual([rewritten]);
    // The parent's model reads the verdict on what was applied.
    await expect(review).resolves.toEqual({ attachment: rewritten, note: expect.stringContaining('Accepted: a.txt#1:rewritten.') });
    expect(broker.waiting()).toBe(0);
  });
});

/** The broker's requests, one at a time, as they come. */
function requests(broker: ReturnType<typeof createReviewBroker>): () => Promise<ReviewRequest> {
  const came: ReviewRequest[] = [];
  const waiting: Array<(r: ReviewRequest) => void> = [];
  broker.onRequest((r) => (waiting.length > 0 ? waiting.shift()!(r) : came.push(r)));
  return () => (came.length > 0 ? Promise.resolve(came.shift()!) : new Promise((resolve) => waiting.push(resolve)));
}

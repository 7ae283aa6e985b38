import { randomUUID } from 'node:crypto';
import type { ReportReviewer, ThreadRecord } from '@infinity-code/runtime';
import type { ReviewOutcome, ReviewRequest } from './controller.js';
import { ReviewChangedError, type ReviewDecision, type ReviewDiff } from '../review-diff.js';

export interface ReviewBrokerOptions {
  /** The child's changes since it was spawned; null or no files: nothing to review. */
  diffOf(thread: ThreadRecord): Promise<ReviewDiff | null>;
  /**
   * Carry the decision out (squash accepted hunks into the parent, discard the rest). A
   * ReviewChangedError with a fresh diff (the child's changes moved since they were shown) asks
   * again, with that diff, instead of ending the review.
   */
  apply(request: ReviewRequest, decision: ReviewDecision): Promise<ReviewOutcome>;
}

/**
 * Connects the runtime's report reviewer to a UI. When a child reports, `reviewer` asks for the
 * human's decision and waits (the child waits with it); the UI hears the request through
 * `onRequest` and answers with `resolve`. The parent's model then reads the verdict as a note
 * on the report, and the UI gets the diff as the report's attachment.
 */
export interface ReviewBroker {
  /** Pass as LocalSystem's `reviewReport` option. */
  reviewer: ReportReviewer;
  /** Requests waiting now and every later one; returns the unsubscribe function. */
  onRequest(listener: (request: ReviewRequest) => void): () => void;
  /** The human decided: apply it, release the waiting child, and say what happened. */
  resolve(id: string, decision: ReviewDecision): Promise<ReviewOutcome>;
  /** How many children wait on a decision now. */
  waiting(): number;
}

interface Waiting {
  request: ReviewRequest;
  decide(decision: ReviewDecision): Promise<ReviewOutcome>;
}

export function createReviewBroker(opts: ReviewBrokerOptions): ReviewBroker {
  const waiting = new Map<string, Waiting>();
  let listeners: Array<(request: ReviewRequest) => void> = [];
  return {
    async reviewer(thread, _report, { signal }) {
      // Not waited for once the session closes: the diff may need the sandboxes the close is
      // taking down, and the close waits for this child's slice.
      const diff = await untilClosed(opts.diffOf(thread), signal);
      if (!diff) return {};
      // Nothing to decide on, but the parent's model should know what did not come through.
      if (diff.files.length === 0) return diff.leftOut?.length ? { attachment: diff, note: leftOutNote(diff) } : {};
      // The diff decided on last: the one whose verdict the parent's model reads.
      let decided = diff;
      const note = await new Promise<string>((release, fail) => {
        let open: string | undefined;
        // Quitting with the review open: the runtime abandons the report and asks again next start.
        const abandon = () => {
          if (open !== undefined && waiting.delete(open)) fail(closedError());
        };
        const settle = () => signal.removeEventListener('abort', abandon);
        const ask = (shown: ReviewDiff) => {
          const request: ReviewRequest = { id: `review:${randomUUID()}`, kind: 'report', childThreadId: thread.id, diff: shown };
          open = request.id;
          waiting.set(request.id, {
            request,
            async decide(decision) {
              try {
                const outcome = await opts.apply(request, decision);
                settle();
                release([reviewNote(decision, outcome), leftOutNote(shown)].filter((l) => l !== '').join('\n'));
                return outcome;
              } catch (err) {
                // The child's changes moved after they were shown: nothing was applied, and the
                // child waits on for a decision on them as they are now. The error tells the UI.
                if (err instanceof ReviewChangedError && err.fresh && !signal.aborted) {
                  decided = err.fresh;
                  ask(err.fresh);
                } else {
                  settle();
                  fail(err instanceof Error ? err : new Error(String(err)));
                }
                throw err;
              }
            },
          });
          for (const l of listeners) l(request);
        };
        if (signal.aborted) return fail(closedError());
        signal.addEventListener('abort', abandon, { once: true });
        ask(diff);
      });
      return { attachment: decided, note };
    },
    onRequest(listener) {
      listeners = [...listeners, listener];
      for (const w of waiting.values()) listener(w.request);
      return () => {
        listeners = listeners.filter((l) => l !== listener);
      };
    },
    waiting: () => waiting.size,
    async resolve(id, decision) {
      const w = waiting.get(id);
      if (!w) throw new Error(`no review ${id} is waiting`);
      waiting.delete(id);
      return w.decide(decision);
    },
  };
}

/** The changes of a child that its diff left out (so no review could merge them), for the parent's model. */
export function leftOutNote(diff: ReviewDiff): string {
  if (!diff.leftOut?.length) return '';
  return ['These changes were left out and not merged:', ...diff.leftOut.map((l) => `- ${l.path}: ${l.reason}`)].join('\n');
}

/** What the parent's model (and the child) read about the human's verdict. */
export function reviewNote(decision: ReviewDecision, outcome?: ReviewOutcome): string {
  const lines = ['The user reviewed these changes.'];
  if (decision.accepted.length > 0) lines.push(`Accepted: ${decision.accepted.join(', ')}.`);
  for (const r of decision.rejected) lines.push(`Rejected ${r.id}: ${r.reason ? r.reason : '(no reason given)'}.`);
  if (outcome?.message) lines.push(outcome.message);
  if (outcome?.conflicts?.length) lines.push(`Conflicts in: ${outcome.conflicts.join(', ')}.`);
  return lines.join('\n');
}

const closedError = () => new Error('the session closed before the review was decided');

/** `work`, or a rejection as soon as `signal` aborts (the session closed: the review is abandoned). */
function untilClosed<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  const closed = closedError;
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(closed());
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => undefined);
      reject(closed());
    };
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

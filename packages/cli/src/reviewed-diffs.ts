// Accepting a review applies exactly what the user was shown. A sandbox keeps changing while a
// review is open (a command of the agent's still runs, a child's background job writes), so a
// diff taken again at accept time may hold changes nobody saw, and accepting "all" of it would
// apply them. Here the diff behind each review is kept, bytes and all, under the ReviewDiff the
// UI was given: a decision cuts those bytes. Before that, the sandbox's changes now are compared
// with the reviewed ones; where a file the decision accepts something in differs, nothing is
// applied and the diff as it is now is offered for a new review.
import type { SandboxDiff } from '@infinity-code/sandbox';
import { changedSinceReview, selectHunks } from '@infinity-code/sandbox/patches';
import { reviewOf } from './review.js';
import { ReviewChangedError, type ReviewDecision, type ReviewDiff } from './review-diff.js';

export class ReviewedDiffs {
  // Keyed by the very object the UI shows and hands back with the decision (ReviewRequest.diff);
  // a review nobody holds any more is forgotten with it.
  readonly #shown = new WeakMap<ReviewDiff, SandboxDiff>();

  /** What to show for `diff`; a decision on it is carried out on `diff` itself (see accepted). */
  show(diff: SandboxDiff): ReviewDiff {
    const review = reviewOf(diff);
    this.#shown.set(review, diff);
    return review;
  }

  /**
   * The reviewed diff cut down to the accepted hunks, when `current` (the same sandbox's diff
   * taken now) still holds, byte for byte, the reviewed change of every file something is
   * accepted in. Otherwise throws ReviewChangedError with `current` to review again. With
   * `restDropped` (what is not applied is discarded, as a child's sandbox is after its review)
   * any change since the review counts, in any file: none may be dropped unseen.
   */
  accepted(review: ReviewDiff, current: SandboxDiff, decision: ReviewDecision, { restDropped = false }: { restDropped?: boolean } = {}): SandboxDiff {
    const reviewed = this.#shown.get(review);
    if (reviewed === undefined) throw new Error('This review was not made in this session, so nothing was applied: open it again (/diff).');
    const changed = changedSinceReview(reviewed, current, restDropped ? undefined : decision.accepted);
    if (changed.length > 0) throw new ReviewChangedError(changed, current.isEmpty ? null : this.show(current));
    return selectHunks(reviewed, decision.accepted);
  }
}

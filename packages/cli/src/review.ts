import type { ReportReviewer, ThreadRecord } from '@infinity-code/runtime';
import type { ApplyResult, SandboxDiff } from '@infinity-code/sandbox';
import { selectHunks, toReviewDiff } from './git-patch.js';
import type { SandboxMap } from './sandbox-map.js';
import { allHunkIds, type ReviewDecision, type ReviewDiff } from './tui/index.js';

/** A diff reduced to the accepted hunks, in the shape the sandbox applies. */
export function selectedDiff(diff: SandboxDiff, decision: ReviewDecision): SandboxDiff {
  const patch = selectHunks(diff.patch, new Set(decision.accepted));
  const kept = new Set(toReviewDiff(patch).files.map((f) => f.path));
  return {
    patch,
    patchBytes: Buffer.from(patch),
    files: diff.files.filter((f) => kept.has(f.path)),
    omitted: diff.omitted,
    from: diff.from,
    to: diff.to,
    isEmpty: patch === '',
  };
}

/**
 * Carries out a decision on a child's diff: accepted hunks go into the parent's sandbox, and the
 * child continues on a fresh sandbox over the parent's new state (so what was rejected is gone
 * and nothing is offered twice).
 */
export async function settleChildDiff(
  sandboxes: SandboxMap,
  child: ThreadRecord,
  diff: SandboxDiff,
  decision: ReviewDecision,
): Promise<ApplyResult> {
  const parentId = child.parentId!;
  const parent = await sandboxes.sandboxFor(parentId);
  const chosen = selectedDiff(diff, decision);
  const result = chosen.isEmpty ? { clean: true, conflicts: [], files: [] } : await parent.apply(chosen);
  await sandboxes.restack(child.id, parentId);
  return result;
}

/** The child's changes since it was spawned, or null when it changed nothing. */
export async function childDiff(sandboxes: SandboxMap, child: ThreadRecord): Promise<{ diff: SandboxDiff; review: ReviewDiff } | null> {
  if (child.parentId === null) return null;
  const sb = await sandboxes.sandboxFor(child.id);
  const diff = await sb.diff();
  if (diff.isEmpty) return null;
  return { diff, review: toReviewDiff(diff.patch) };
}

export function describeApply(result: ApplyResult, target: string): string {
  if (result.files.length === 0) return `Nothing was applied to ${target}.`;
  const base = `Applied ${result.files.length} file(s) to ${target}.`;
  return result.clean ? base : `${base} Conflicts (left with markers): ${result.conflicts.join(', ')}.`;
}

/** Headless review: no one to ask, so every child's diff is accepted into its parent's sandbox. */
export function autoAcceptReviewer(sandboxes: SandboxMap): ReportReviewer {
  return async (child) => {
    const found = await childDiff(sandboxes, child);
    if (!found) return {};
    const decision: ReviewDecision = { accepted: allHunkIds(found.review), rejected: [] };
    const result = await settleChildDiff(sandboxes, child, found.diff, decision);
    return {
      attachment: found.review,
      note: `Its changes were merged into your sandbox. ${describeApply(result, 'your sandbox')}`,
    };
  };
}

import type { ReportReviewer, ThreadRecord } from '@infinity-code/runtime';
import type { ApplyResult, OmittedFile, SandboxDiff } from '@infinity-code/sandbox';
import { patchFiles, selectHunks, UnsafeChangeError } from '@infinity-code/sandbox/patches';
import { fileCount } from './pending-changes.js';
import type { ReviewedDiffs } from './reviewed-diffs.js';
import type { ReviewDecision, ReviewDiff, ReviewFile } from './review-diff.js';
import type { ThreadRecords } from './sandbox-map.js';
import type { SessionSandboxes } from './session-sandboxes.js';
import type { ReviewBrokerOptions } from './tui/review-broker.js';
import type { SessionHooks } from './tui/local-controller.js';

/** Where threads' sandboxes are found and a reviewed child starts over. */
type ThreadSandboxes = Pick<SessionSandboxes, 'sandboxFor' | 'restack' | 'discard'>;

/**
 * A diff reduced to the accepted hunks, in the shape the sandbox applies: the sandbox cuts the
 * patch's bytes (a patch rebuilt from decoded text would mangle content that is not UTF-8).
 * Everything accepted: the diff itself. What the diff left out stays listed.
 */
export function selectedDiff(diff: SandboxDiff, decision: ReviewDecision): SandboxDiff {
  return selectHunks(diff, decision.accepted);
}

/**
 * The reviewable shape of a sandbox diff: its files and hunks with their ids (as selectedDiff
 * reads them), each file's modes and symlink target, and what the diff left out with the reason.
 */
export function reviewOf(diff: SandboxDiff): ReviewDiff {
  const byPath = new Map(diff.files.map((f) => [f.path, f]));
  const files = patchFiles(diff.patchBytes).map((r): ReviewFile => {
    const f = byPath.get(r.path);
    return {
      path: r.path,
      status: r.status,
      hunks: r.hunks,
      decisionIds: r.decisionIds,
      ...(f?.oldMode !== undefined ? { oldMode: f.oldMode } : {}),
      ...(f?.newMode !== undefined ? { newMode: f.newMode } : {}),
      ...(f?.linkTarget !== undefined ? { linkTarget: f.linkTarget } : {}),
    };
  });
  return diff.omitted.length === 0 ? { files } : { files, leftOut: diff.omitted.map((o) => ({ path: o.path, reason: o.reason })) };
}

/** "Left out (never applied): a — why; b — why." for messages; empty when nothing was. */
export function describeLeftOut(omitted: readonly OmittedFile[]): string {
  if (omitted.length === 0) return '';
  return `Left out (never applied): ${omitted.map((o) => `${o.path} — ${o.reason}`).join('; ')}.`;
}

/**
 * Carries out a decision on a child's diff: `chosen` (the accepted hunks, see selectedDiff) goes
 * into the parent's sandbox, and the child continues on a fresh sandbox over the parent's new
 * state (so what was rejected is gone and nothing is offered twice). A child that closes with
 * this report (`closing`) gets no fresh sandbox: its own is discarded at once, which is all a
 * fresh one would have been spared for.
 */
export async function settleChildDiff(
  sandboxes: ThreadSandboxes,
  child: ThreadRecord,
  chosen: SandboxDiff,
  { closing = false }: { closing?: boolean } = {},
): Promise<ApplyResult> {
  const parentId = child.parentId!;
  const parent = await sandboxes.sandboxFor(parentId);
  const result = chosen.isEmpty ? { clean: true, conflicts: [], files: [] } : await parent.apply(chosen);
  // A closing child's sandbox goes without its parent waiting (the session's close waits for it).
  if (closing) void sandboxes.discard(child.id).catch(() => undefined);
  else await sandboxes.restack(child.id, parentId);
  return result;
}

/**
 * The child's changes since it was spawned (what may be merged, and what was left out), or null
 * when it changed nothing.
 */
export async function childDiff(sandboxes: ThreadSandboxes, child: ThreadRecord): Promise<{ diff: SandboxDiff; review: ReviewDiff } | null> {
  if (child.parentId === null) return null;
  const sb = await sandboxes.sandboxFor(child.id);
  const diff = await sb.diff();
  if (diff.isEmpty && diff.omitted.length === 0) return null;
  return { diff, review: reviewOf(diff) };
}

/** How many files a message names; the rest are counted ("and 5 more"). */
export const NAMED_FILES_MAX = 20;

/** "a.ts, b.ts and 3 more": the first `max` files named, the rest counted. */
export function nameFiles(files: readonly string[], max = NAMED_FILES_MAX): string {
  const named = files.slice(0, max).join(', ');
  return files.length > max ? `${named} and ${files.length - max} more` : named;
}

/** The files one per line, indented, the first `max` of them, then "and 5 more": for a terminal. */
export function fileLines(files: readonly string[], max = NAMED_FILES_MAX): string {
  const lines = files.slice(0, max).map((f) => `  ${f}\n`);
  if (files.length > max) lines.push(`  and ${files.length - max} more\n`);
  return lines.join('');
}

/** "Applied 2 files to <target>: a.ts, b.ts.", then the conflicts if any. */
export function describeApply(result: ApplyResult, target: string): string {
  if (result.files.length === 0) return `Nothing was applied to ${target}.`;
  return withConflicts(result, `Applied ${fileCount(result.files.length)} to ${target}: ${nameFiles(result.files)}.`);
}

/**
 * What accepting a child's changes did, in the user's words: the thread that gets them (the
 * main one, or the child's parent thread) holds them now, not yet the user's files.
 */
export function describeMerge(result: ApplyResult, into: 'main' | 'parent'): string {
  const changes = into === 'main' ? "the main thread's changes" : "its parent thread's changes";
  if (result.files.length === 0) return `Nothing was merged into ${changes}.`;
  return withConflicts(result, `Accepted: ${fileCount(result.files.length)} merged into ${changes}: ${nameFiles(result.files)}.`);
}

function withConflicts(result: ApplyResult, said: string): string {
  return result.clean ? said : `${said} Conflicts (left with markers): ${result.conflicts.join(', ')}.`;
}

/**
 * Headless review: no one to ask, so every child's diff is accepted into its parent's sandbox,
 * the one diff taken here (what the parent's model is told it got is what was merged).
 */
export function autoAcceptReviewer(sandboxes: ThreadSandboxes): ReportReviewer {
  return async (child, _report, { closed }) => {
    const found = await childDiff(sandboxes, child);
    if (!found) return {};
    const result = await settleChildDiff(sandboxes, child, found.diff, { closing: closed });
    const leftOut = describeLeftOut(found.diff.omitted);
    return {
      attachment: found.review,
      note: `Its changes were merged into your sandbox. ${describeApply(result, 'your sandbox')}${leftOut ? ` ${leftOut}` : ''}`,
    };
  };
}

/**
 * An apply the sandbox refused because the diff, reviewed earlier, now holds changes that may not
 * be applied (the user's tree gained an ignored file meanwhile): says what to run to go on.
 */
export function explainRefusedApply(err: unknown, again: string): unknown {
  if (!(err instanceof UnsafeChangeError)) return err;
  const list = err.omitted.map((o) => `${o.path} (${o.reason})`).join('; ');
  return new Error(`Nothing was applied: since the review, these changes may no longer be applied: ${list}. Run ${again} again: it leaves them out.`, {
    cause: err,
  });
}

/**
 * The TUI's review of children's reports: each child's diff is shown through `reviewed`, and a
 * decision merges the reviewed bytes into the parent's sandbox, or, when the child's sandbox has
 * changed since (in any file: what is not merged is dropped), nothing (ReviewChangedError: the
 * broker asks again with the diff as it is).
 */
export function reportReview(sandboxes: ThreadSandboxes, threads: ThreadRecords, reviewed: ReviewedDiffs): ReviewBrokerOptions {
  return {
    diffOf: async (child) => {
      const found = await childDiff(sandboxes, child);
      return found ? reviewed.show(found.diff) : null;
    },
    apply: async (request, decision) => {
      const child = await threads.threadRecord(request.childThreadId!);
      const now = child && (await childDiff(sandboxes, child));
      if (!child || !now) return { message: 'The child has no changes left to apply.' };
      // The child goes on over a fresh sandbox: whatever is not merged now is gone.
      const chosen = reviewed.accepted(request.diff, now.diff, decision, { restDropped: true });
      const result = await settleChildDiff(sandboxes, child, chosen);
      const parent = await threads.threadRecord(child.parentId!);
      return { message: describeMerge(result, parent?.parentId == null ? 'main' : 'parent'), conflicts: result.conflicts };
    },
  };
}

/** Where `/diff` takes the session's changes from and applies them (the root's sandbox, the user's tree). */
export interface WorkingTreeSource {
  diff(): Promise<SandboxDiff>;
  apply(diff: SandboxDiff): Promise<ApplyResult>;
}

/**
 * `/diff`: the root's changes shown through `reviewed`, and a decision applying the reviewed
 * bytes to the working tree, or nothing when the sandbox has changed them since
 * (ReviewChangedError, with the diff as it is now to review again).
 */
export function workingTreeReview(source: WorkingTreeSource, reviewed: ReviewedDiffs): Required<Pick<SessionHooks, 'showDiff' | 'applyToWorkingTree'>> {
  return {
    async showDiff() {
      const diff = await source.diff();
      return diff.isEmpty && diff.omitted.length === 0 ? null : reviewed.show(diff);
    },
    async applyToWorkingTree(request, decision) {
      const chosen = reviewed.accepted(request.diff, await source.diff(), decision);
      const result = await source.apply(chosen).catch((err: unknown) => {
        throw explainRefusedApply(err, '/diff');
      });
      const leftOut = describeLeftOut(chosen.omitted);
      return { message: `${describeApply(result, 'the working tree')}${leftOut ? ` ${leftOut}` : ''}`, conflicts: result.conflicts };
    },
  };
}

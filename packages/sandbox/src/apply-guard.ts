import { classifyChanges, type ApplyPolicyOptions, type PolicyChange } from './apply-policy.js';
import type { SessionContext } from './backend.js';
import type { ChangedFile, SandboxDiff } from './diff.js';
import { UnsafeChangeError } from './errors.js';
import { workingTreeFactsOf } from './working-tree-facts.js';

/**
 * Checks a diff about to be applied against the path rules of the apply policy, and, for the
 * user's working tree, against the files it ignores and what it has in the way as they are now
 * (one may have appeared while the diff was being reviewed). Diffs from Sandbox.diff() pass:
 * this catches diffs put together elsewhere, and the user's tree moving under a review. Throws
 * rather than applies part of it.
 */
export async function refuseUnsafeChanges(
  ctx: SessionContext,
  diff: SandboxDiff,
  policy: ApplyPolicyOptions,
  workingTree?: string,
): Promise<void> {
  if (diff.isEmpty) return;
  const changes = diff.files.map(toPolicyChange);
  const links = new Map(diff.files.flatMap((f) => (f.linkTarget !== undefined ? [[f.path, f.linkTarget] as const] : [])));
  const tree = workingTree === undefined ? undefined : await workingTreeFactsOf(ctx, workingTree, changes);
  // Sizes were judged when the diff was made; only the rules about what a file is apply here.
  const { omitted } = classifyChanges(changes, { nestedRepos: new Set(), links, ...tree }, { ...policy, maxFileBytes: Infinity, maxDiffBytes: Infinity });
  if (omitted.length > 0) throw new UnsafeChangeError(omitted);
}

function toPolicyChange(f: ChangedFile): PolicyChange {
  return {
    path: f.path,
    ...(f.oldPath !== undefined ? { oldPath: f.oldPath } : {}),
    ...(f.oldMode !== undefined ? { oldMode: f.oldMode } : {}),
    ...(f.newMode !== undefined ? { newMode: f.newMode } : {}),
    ...(f.linkTarget !== undefined ? { linkTarget: f.linkTarget } : {}),
  };
}

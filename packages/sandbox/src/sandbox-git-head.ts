import type { Snapshot } from './base-snapshot.js';

/**
 * Where a sandbox's own git stands for a snapshot: where the user's stood when it was taken.
 * HEAD names the user's branch, pinned in the sandbox's private git dir at the user's HEAD commit
 * (the snapshot's parent), so `git log` is the user's history and the snapshot commit, a thing of
 * ours, never shows; or HEAD is detached there, as the user's was.
 */
export interface SandboxHead {
  /** What the HEAD file holds, without its newline. */
  head: string;
  /** The branch HEAD names (`refs/heads/…`), when it names one. */
  branch: string | undefined;
  /** The commit HEAD resolves to; undefined when it is unborn (a repository without commits). */
  commit: string | undefined;
}

// Unborn, with no branch recorded (a record from before branches were): git's own default.
const UNBORN_DEFAULT = 'refs/heads/main';

export function sandboxHead(snapshot: Snapshot): SandboxHead {
  const branch = snapshot.branch !== undefined && isBranchRef(snapshot.branch) ? snapshot.branch : snapshot.parent ? undefined : UNBORN_DEFAULT;
  const commit = snapshot.parent ?? undefined;
  return { head: branch ? `ref: ${branch}` : commit!, branch, commit };
}

/**
 * Whether `ref` is a branch whose name can be a path below the git dir as it stands: the names
 * git itself accepts can, and this is checked again because the path is built from it.
 */
export function isBranchRef(ref: string): boolean {
  const parts = ref.split('/');
  return (
    parts.length > 2 &&
    parts[0] === 'refs' &&
    parts[1] === 'heads' &&
    parts.every((p) => p !== '' && !p.startsWith('.') && !p.endsWith('.lock') && !/[\0-\x20\x7f~^:?*[\\]/.test(p))
  );
}

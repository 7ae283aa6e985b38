import type { SessionContext } from './backend.js';
import { workingTreeTree } from './base-snapshot.js';
import { deliveredTree } from './delivered.js';
import type { Sandbox } from './sandbox.js';
import { treeChanges } from './tree-changes.js';
import { shownName } from './utf8-names.js';

/** SandboxSession.changedSinceSnapshot, from the session's context. */
export async function workingTreeChanges(ctx: SessionContext, except?: Sandbox): Promise<string[]> {
  const { repo, objectsDir, tmpDir } = ctx;
  const tree = await workingTreeTree(repo, objectsDir, tmpDir);
  const current = ctx.snapshot.tree;
  if (tree === current) return [];
  const changed = (await treeChanges(ctx, current, tree)).map((c) => c.path);
  if (!except) return changed.map(shownName);
  const theirs = await except.op(async () => (await except.handle.changeTrees('snapshot')).to);
  const differ = new Set((await treeChanges(ctx, tree, theirs)).map((c) => c.path));
  // Part of a file accepted (some of its hunks) leaves it holding neither the snapshot's version
  // nor the sandbox's, but what the working tree received from the sandbox: not the user's edit.
  const delivered = deliveredTree(except.delivered, current);
  const notDelivered = delivered === undefined ? undefined : new Set((await treeChanges(ctx, tree, delivered)).map((c) => c.path));
  return changed.filter((p) => differ.has(p) && (notDelivered?.has(p) ?? true)).map(shownName);
}

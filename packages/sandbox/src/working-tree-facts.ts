import { createsPath, type PolicyChange, type PolicyFacts } from './apply-policy.js';
import type { SessionContext } from './backend.js';
import { ignoredInWorkingTree } from './user-ignored.js';
import { obstaclesInWorkTree } from './work-tree-obstacles.js';

/** What the apply policy needs to know of the user's working tree (see PolicyFacts). */
export type WorkingTreeFacts = Required<Pick<PolicyFacts, 'userIgnored' | 'obstacles'>>;

/**
 * What the rules need to know of the user's working tree at `root` about `changes`: the files it
 * ignores among those the diff creates, and what it has in the way (see OmitRule). Gathered when
 * a diff for it is made, and again when one is applied: the tree may have moved in between.
 */
export async function workingTreeFactsOf(ctx: SessionContext, root: string, changes: readonly PolicyChange[]): Promise<WorkingTreeFacts> {
  const [userIgnored, obstacles] = await Promise.all([
    ignoredInWorkingTree(ctx, root, changes.filter(createsPath).map((c) => c.path)),
    obstaclesInWorkTree(root, changes),
  ]);
  return { userIgnored, obstacles };
}

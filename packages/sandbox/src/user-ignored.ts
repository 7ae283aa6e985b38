import type { SessionContext } from './backend.js';
import { nulFields } from './git.js';
import { isTooLong } from './long-paths.js';
import { userRepoGit } from './trusted-git.js';
import { WorkTreeShape } from './work-tree-shape.js';

/**
 * Of `created` (paths a diff brings into being), those the user's working tree at `root` already
 * has, ignored there by the user's own rules. Ignored files never reach a snapshot, so the agent
 * made its file without seeing the user's, and a 3-way apply would merge the two with conflict
 * markers into a file the user may not even look at (`.env`).
 */
export async function ignoredInWorkingTree(ctx: SessionContext, root: string, created: readonly string[]): Promise<Set<string>> {
  // Looked up without following a link on the way: git refuses to check a path beyond one (and
  // such a path is left out as 'in-the-way'); and what is where the link points is not the tree's.
  const shape = new WorkTreeShape(root);
  const present = (
    await Promise.all(
      created.map(async (p) => (!isTooLong(p) && (await shape.blockedAt(p)) === undefined && (await shape.kind(p)) !== 'missing' ? [p] : [])),
    )
  ).flat();
  if (present.length === 0) return new Set();
  // --no-index: the rules alone decide, whatever the user's index holds.
  // The user's own tree and rules (their config, with fsmonitor and hooks off).
  const out = await userRepoGit(ctx.repo.gitDir)([`--work-tree=${root}`, 'check-ignore', '--no-index', '-z', '--stdin'], {
    cwd: root,
    input: present.map((p) => `${p}\0`).join(''),
    okExitCodes: [1],
  });
  return new Set(nulFields(out.stdout));
}

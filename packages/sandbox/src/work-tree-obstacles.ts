import type { Obstacle, PolicyChange } from './apply-policy.js';
import { isTooLong } from './long-paths.js';
import { WorkTreeShape } from './work-tree-shape.js';

/**
 * What the user's working tree at `root` has in the way of `changes`, by change path (see
 * OmitRule 'in-the-way'): a symlink or a file above one of a change's paths that the diff does
 * not remove, or a directory where a change puts a file that holds more than the diff removes.
 * git would write through such a link (its check for links on the way reads the index, and ours
 * holds the touched paths only), refuse the whole apply, or stop halfway through it.
 * The agent never saw these: ignored files and links are not in the snapshot, and the user may
 * have made the rest since.
 */
export async function obstaclesInWorkTree(root: string, changes: readonly PolicyChange[]): Promise<Map<string, Obstacle>> {
  const shape = new WorkTreeShape(root);
  // What the diff takes away: a link or file there may stand in the way, git removes it first.
  const removed = new Set(changes.flatMap((c) => (c.oldPath !== undefined ? [c.oldPath] : c.newMode === undefined ? [c.path] : [])));
  const found = new Map<string, Obstacle>();
  await Promise.all(
    changes.map(async (c) => {
      // Left out for its length anyway, and too long to be looked at.
      if (isTooLong(c.path) || (c.oldPath !== undefined && isTooLong(c.oldPath))) return;
      for (const p of c.oldPath === undefined ? [c.path] : [c.oldPath, c.path]) {
        const at = await shape.blockedAt(p);
        if (at !== undefined && !removed.has(at)) {
          found.set(c.path, { kind: (await shape.kind(at)) === 'symlink' ? 'symlink' : 'file', at });
          return;
        }
      }
      if (c.newMode !== undefined && (await shape.kind(c.path)) === 'dir' && (await shape.holdsMoreThan(c.path, removed))) {
        found.set(c.path, { kind: 'dir' });
      }
    }),
  );
  return found;
}

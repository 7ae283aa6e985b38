import { WorkTreeShape } from './work-tree-shape.js';

// `git update-index` stages paths from a work tree, and stops the whole run at a directory ("is a
// directory") or at a path beyond a symlink; `git check-ignore` stops at the latter too. Neither
// is a file of that work tree: a directory's files have paths of their own, and a path below a
// link or a file names nothing, as far as git is concerned. A file replaced by a directory (or
// by a link), or the other way round, puts both kinds among the paths a change touches.

/** What the work tree has at a path, for staging: a file, symlink or nothing ('stage'), or not a file of its own. */
export type Staging = 'stage' | 'dir' | 'behind-file' | { behindLink: string };

/** The Staging of each of `paths` in the work tree at `root` (where this process sees it). */
export async function stagings(root: string, paths: readonly string[]): Promise<Staging[]> {
  const shape = new WorkTreeShape(root);
  return Promise.all(
    paths.map(async (p): Promise<Staging> => {
      const at = await shape.blockedAt(p);
      if (at !== undefined) return (await shape.kind(at)) === 'symlink' ? { behindLink: at } : 'behind-file';
      return (await shape.kind(p)) === 'dir' ? 'dir' : 'stage';
    }),
  );
}

export function isBehindLink(s: Staging): s is { behindLink: string } {
  return typeof s === 'object';
}

/**
 * Of `paths` (those a patch touches), the ones to stage from the work tree at `root` before the
 * patch is applied there: those it has as a file, a symlink or not at all, and also any path
 * behind a link the patch keeps (not in `removed`), so that git refuses the apply rather than
 * writes through the link (the apply policy leaves such a change out of a diff for the user's
 * working tree, see OmitRule 'in-the-way'). A path behind a file or a link the patch removes
 * does not exist until the patch makes it.
 */
export async function stageablePaths(root: string, paths: readonly string[], removed: ReadonlySet<string>): Promise<string[]> {
  const found = await stagings(root, paths);
  return paths.filter((_, i) => {
    const s = found[i];
    return s === 'stage' || (isBehindLink(s) && !removed.has(s.behindLink));
  });
}

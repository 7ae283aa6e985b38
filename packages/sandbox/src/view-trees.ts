import { randomUUID } from 'node:crypto';
import { copyFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { SessionContext } from './backend.js';
import { nulFields, text, type GitRunner } from './git.js';
import { addPaths, dropPaths } from './stage-paths.js';
import { sealedGit } from './trusted-git.js';

/**
 * Two git trees that differ exactly at `paths`: the snapshot's tree with those paths taken from
 * the lower view, and the same with them taken from the merged view. diff-tree between them is
 * the sandbox's change, with git's own rename and binary handling. Paths git ignores (build
 * output, caches) are left out unless the snapshot tracks them, as `git add -A` would.
 */
export async function buildTrees(
  ctx: SessionContext,
  /** Sealed (see trusted-git.ts), seeing both work trees. */
  git: GitRunner,
  paths: readonly string[],
  lowerWorkTree: string,
  mergedWorkTree: string,
): Promise<{ from: string; to: string }> {
  if (paths.length === 0) return { from: ctx.snapshot.tree, to: ctx.snapshot.tree };
  const pruned = path.join(ctx.tmpDir, `pruned-${randomUUID()}.index`);
  const tree = async (workTree: string, kept: readonly string[]): Promise<string> => {
    const index = path.join(ctx.tmpDir, `tree-${randomUUID()}.index`);
    try {
      await copyFile(pruned, index);
      await addPaths({ paths: kept, env: ctx.objectEnv, cwd: ctx.tmpDir, git, workTree, index });
      return text(await git(['write-tree'], { cwd: ctx.tmpDir, env: { ...ctx.objectEnv, GIT_INDEX_FILE: index } }));
    } finally {
      await rm(index, { force: true });
      await rm(`${index}.lock`, { force: true });
    }
  };
  try {
    // Which paths git ignores, and the base index without the changed paths, side by side: each
    // is a process, neither needs the other. Both settle before the finally below cleans up.
    const [ignoredOut, dropped] = await Promise.allSettled([
      git([`--work-tree=${mergedWorkTree}`, 'check-ignore', '-z', '--stdin'], {
        cwd: ctx.tmpDir,
        env: { ...ctx.objectEnv, GIT_INDEX_FILE: ctx.baseIndex },
        input: paths.map((p) => `${p}\0`).join(''),
        okExitCodes: [1],
      }),
      // The base index is the snapshot already read (a copy beats a read-tree per tree); the
      // changed paths are dropped once, here on the host, so both trees hash them afresh.
      copyFile(ctx.baseIndex, pruned).then(() =>
        dropPaths({ paths, env: ctx.objectEnv, cwd: ctx.tmpDir, git: sealedGit(ctx.plumbingGitDir), workTree: ctx.baseDir, index: pruned }),
      ),
    ]);
    if (ignoredOut.status === 'rejected') throw ignoredOut.reason;
    if (dropped.status === 'rejected') throw dropped.reason;
    const ignored = new Set(nulFields(ignoredOut.value.stdout));
    const kept = paths.filter((p) => !ignored.has(p));
    const [from, to] = await Promise.all([tree(lowerWorkTree, kept), tree(mergedWorkTree, kept)]);
    return { from, to };
  } finally {
    await rm(pruned, { force: true });
    await rm(`${pruned}.lock`, { force: true });
  }
}

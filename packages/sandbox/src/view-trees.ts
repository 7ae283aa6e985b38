import { randomUUID } from 'node:crypto';
import { copyFile, lstat, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SessionContext } from './backend.js';
import { GitError } from './errors.js';
import { text, type GitRunner, type GitStep } from './git.js';
import { isBehindLink, stagings } from './stageable-paths.js';
import { addPaths, dropPaths } from './stage-paths.js';
import { sealedGit } from './trusted-git.js';
import { fsPath, nulList, nulNames } from './utf8-names.js';

/**
 * Two git trees that differ exactly at `paths`: the snapshot's tree with those paths taken from
 * the lower view, and the same with them taken from the merged view. diff-tree between them is
 * the sandbox's change, with git's own rename and binary handling. Paths git ignores (build
 * output, caches) are left out unless the snapshot tracks them, as `git add -A` would. Names that
 * are not UTF-8 come escaped (see utf8-names.ts) and go to git as their bytes: the trees hold the
 * real files, and the diff leaves them out, saying so.
 */
export async function buildTrees(
  ctx: SessionContext,
  /** Sealed (see trusted-git.ts), seeing both work trees. */
  git: GitRunner,
  paths: readonly string[],
  lowerWorkTree: string,
  mergedWorkTree: string,
  /**
   * Where this process sees both views: what each has at the paths decides which of them its tree
   * takes from it, and the paths' sizes how the trees are made.
   */
  hosts?: { lower: string; merged: string },
): Promise<{ from: string; to: string }> {
  if (paths.length === 0) return { from: ctx.snapshot.tree, to: ctx.snapshot.tree };
  const views = await viewPaths(paths, hosts);
  if (hosts !== undefined && (await fewAndSmall(paths, hosts.merged))) {
    return buildTreesInOneStep(ctx, git, paths, views, lowerWorkTree, mergedWorkTree);
  }
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
        input: nulList(views.askIgnored),
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
    const ignored = new Set(nulNames(ignoredOut.value.stdout));
    const kept = (inView: readonly string[]) => inView.filter((p) => !ignored.has(p));
    const [from, to] = await Promise.all([tree(lowerWorkTree, kept(views.lower)), tree(mergedWorkTree, kept(views.merged))]);
    return { from, to };
  } finally {
    await rm(pruned, { force: true });
    await rm(`${pruned}.lock`, { force: true });
  }
}

/** Of the changed paths, those each view has as a file (see viewPaths), and those check-ignore may be asked about. */
interface ViewPaths {
  lower: readonly string[];
  merged: readonly string[];
  askIgnored: readonly string[];
}

/**
 * A path one view has as a directory, or behind a link or a file, is no file of that view: git
 * would refuse to stage it there (see stageable-paths.ts), and the view's tree has none.
 */
async function viewPaths(paths: readonly string[], hosts: { lower: string; merged: string } | undefined): Promise<ViewPaths> {
  if (hosts === undefined) return { lower: paths, merged: paths, askIgnored: paths };
  const [lower, merged] = await Promise.all([stagings(hosts.lower, paths), stagings(hosts.merged, paths)]);
  return {
    lower: paths.filter((_, i) => lower[i] === 'stage'),
    merged: paths.filter((_, i) => merged[i] === 'stage'),
    // check-ignore refuses a path beyond a link; such a path is the lower view's alone, like a deletion.
    askIgnored: paths.filter((_, i) => !isBehindLink(merged[i])),
  };
}

// A diff of at most this many paths, of at most this many bytes together, has its trees made in
// one git run each (see buildTreesInOneStep).
const ONE_STEP_PATHS = 256;
const ONE_STEP_BYTES = 8 * 1024 * 1024;

async function fewAndSmall(paths: readonly string[], mergedHost: string): Promise<boolean> {
  if (paths.length > ONE_STEP_PATHS) return false;
  let bytes = 0;
  for (const p of paths) bytes += (await lstat(fsPath(mergedHost, p)).catch(() => undefined))?.size ?? 0;
  return bytes <= ONE_STEP_BYTES;
}

/**
 * buildTrees for a few small changes: both trees are made by one run of git steps (one entry into
 * the namespace instead of a round trip per step and per tree: the ignore check, the index
 * prunes, the staging and the writing). The ignore check is made once, against the snapshot's
 * index (a path it tracks is never ignored, as in `git add -A`), and every path is staged before
 * the ignored ones are removed again: the same trees, at the cost of hashing ignored files too,
 * which the size limit keeps small.
 */
async function buildTreesInOneStep(
  ctx: SessionContext,
  git: GitRunner,
  paths: readonly string[],
  views: ViewPaths,
  lowerWorkTree: string,
  mergedWorkTree: string,
): Promise<{ from: string; to: string }> {
  const id = randomUUID();
  const list = path.join(ctx.tmpDir, `paths-${id}`);
  const ignored = path.join(ctx.tmpDir, `ignored-${id}`);
  const scratch = [list, ignored];
  const lists: Array<Promise<void>> = [];
  // A list of its own for a subset of the paths (what one view has, see viewPaths); mostly all.
  const listOf = (name: string, subset: readonly string[]): string => {
    if (subset.length === paths.length) return list;
    const file = path.join(ctx.tmpDir, `${name}-${id}`);
    scratch.push(file);
    lists.push(writeFile(file, nulList(subset)));
    return file;
  };
  const treeSteps = (name: string, workTree: string, inView: readonly string[]): GitStep[] => {
    const index = path.join(ctx.tmpDir, `${name}-${id}.index`);
    scratch.push(index, `${index}.lock`, `${index}.tree`);
    const env = { GIT_INDEX_FILE: index };
    return [
      // Dropped first (see dropPaths), so every path is hashed afresh.
      { args: [`--work-tree=${workTree}`, 'update-index', '-z', '--force-remove', '--stdin'], env, stdin: list },
      { args: [`--work-tree=${workTree}`, 'update-index', '-z', '--add', '--remove', '--replace', '--stdin'], env, stdin: listOf(`${name}-paths`, inView), skipWhenStdinEmpty: true },
      // Mostly nothing is ignored: then no process.
      { args: [`--work-tree=${workTree}`, 'update-index', '-z', '--force-remove', '--stdin'], env, stdin: ignored, skipWhenStdinEmpty: true },
      { args: ['write-tree'], env, stdout: `${index}.tree` },
    ];
  };
  try {
    lists.push(writeFile(list, nulList(paths)));
    const from = treeSteps('from', lowerWorkTree, views.lower);
    const to = treeSteps('to', mergedWorkTree, views.merged);
    const asked = listOf('asked', views.askIgnored);
    await Promise.all([...lists, ...[from, to].map((steps) => copyFile(ctx.baseIndex, steps[0].env!.GIT_INDEX_FILE))]);
    const out = await git([], {
      cwd: ctx.tmpDir,
      env: { ...ctx.objectEnv },
      steps: [
        {
          args: [`--work-tree=${mergedWorkTree}`, 'check-ignore', '-z', '--stdin'],
          env: { GIT_INDEX_FILE: ctx.baseIndex },
          stdin: asked,
          stdout: ignored,
          okExitCodes: [1],
        },
      ],
      // Each tree has its own index: both are made at once.
      lanes: [from, to],
    });
    const [fromTree, toTree] = await Promise.all([from, to].map(async (steps) => (await readFile(steps.at(-1)!.stdout!, 'utf8')).trim()));
    if (!/^[0-9a-f]{40,64}$/.test(fromTree) || !/^[0-9a-f]{40,64}$/.test(toTree)) {
      throw new GitError(['write-tree'], `expected two trees, got: ${fromTree} ${toTree}`, out.exitCode);
    }
    return { from: fromTree, to: toTree };
  } finally {
    await Promise.all(scratch.map((f) => rm(f, { force: true })));
  }
}

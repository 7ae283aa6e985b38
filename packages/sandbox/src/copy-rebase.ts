import { randomUUID } from 'node:crypto';
import { lstat, open, rm, rmdir, unlink, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { BaseChange, SessionContext } from './backend.js';
import { text } from './git.js';
import { lstatIn, O_DIR, openDir, under } from './fd-path.js';
import { applyToIndex, isGone, treeChanges, type TreeChange } from './tree-changes.js';
import { sealedGit } from './trusted-git.js';
import { fsPath, nulList } from './utf8-names.js';

/** A copy sandbox as its rebase sees it. */
export interface CopyToRebase {
  treeDir: string;
  /** The tree it was spawned on (what its own diff compares against). */
  spawnTree: string;
  /** The copy's tree as it is now. */
  currentTree(): Promise<string>;
}

/** Paths where tree `a` differs from `to` of the change, and those where it differs from both `from` and `to`. */
async function comparedWithBoth(ctx: SessionContext, change: BaseChange, a: string): Promise<{ notTo: Set<string>; neither: Set<string> }> {
  if (a === change.to.tree) return { notTo: new Set(), neither: new Set() };
  if (a === change.from.tree) return { notTo: new Set(change.changes.map((c) => c.path)), neither: new Set() };
  const [fromSide, toSide] = await Promise.all([treeChanges(ctx, change.from.tree, a), treeChanges(ctx, change.to.tree, a)]);
  const notTo = new Set(toSide.map((c) => c.path));
  return { notTo, neither: new Set(fromSide.map((c) => c.path).filter((p) => notTo.has(p))) };
}

export interface RebasedCopy {
  spawnTree: string;
  /** Changed paths where the copy still differs from the new snapshot: its own (or inherited) version won. */
  overridden: string[];
}

/**
 * Moves a copy onto the new snapshot, as the overlay backends' delta layer does for theirs:
 * every changed path that neither the sandbox (its copy now) nor its ancestors (the tree it was
 * spawned on) changed takes the new snapshot's content; and the spawn tree takes it wherever
 * the ancestors did not change the path, so the sandbox's own diff shows its own work against
 * what it would see had the user's edit been there from the start. A path counts as changed
 * when it differs from both snapshots, which makes a repeat after a crash find the paths
 * already moved unchanged and finish the rest. Commands may be running: files change under
 * them as if the user had edited the copy.
 */
export async function rebaseCopy(ctx: SessionContext, sb: CopyToRebase, change: BaseChange): Promise<RebasedCopy> {
  const [current, inherited] = await Promise.all([
    sb.currentTree().then((tree) => comparedWithBoth(ctx, change, tree)),
    comparedWithBoth(ctx, change, sb.spawnTree).then((c) => c.neither),
  ]);
  const own = current.neither;
  const spawnSide = change.changes.filter((c) => !inherited.has(c.path));
  const wanted = spawnSide.filter((c) => !own.has(c.path));
  const kept = new Set(change.changes.filter((c) => current.notTo.has(c.path)).map((c) => c.path));
  // Deletions first: a path the user turned from a file into a directory needs the file gone.
  for (const c of wanted.filter(isGone)) if (await removeFile(sb.treeDir, c.path)) kept.delete(c.path);
  const writes: TreeChange[] = [];
  for (const c of wanted.filter((w) => !isGone(w))) {
    if (!(await writable(sb.treeDir, c.path))) continue;
    writes.push(c);
    kept.delete(c.path);
  }
  if (writes.length > 0) {
    // checkout-index without -u only reads the index: the shared base index stays as it is.
    await sealedGit(ctx.plumbingGitDir)([`--work-tree=${sb.treeDir}`, 'checkout-index', '-f', '-z', '--stdin'], {
      cwd: sb.treeDir,
      env: { ...ctx.objectEnv, GIT_INDEX_FILE: ctx.baseIndex },
      input: nulList(writes.map((c) => c.path)),
    });
  }
  return { spawnTree: await movedSpawnTree(ctx, sb.spawnTree, change, spawnSide), overridden: [...kept].sort() };
}

/** The spawn tree with the paths of `moved` as the new snapshot has them. */
async function movedSpawnTree(ctx: SessionContext, spawnTree: string, change: BaseChange, moved: readonly TreeChange[]): Promise<string> {
  if (moved.length === 0) return spawnTree;
  if (spawnTree === change.from.tree && moved.length === change.changes.length) return change.to.tree;
  const index = path.join(ctx.tmpDir, `spawn-${randomUUID()}.index`);
  const env = { ...ctx.objectEnv, GIT_INDEX_FILE: index };
  const git = sealedGit(ctx.plumbingGitDir);
  try {
    await git(['read-tree', spawnTree], { cwd: ctx.tmpDir, env });
    await applyToIndex(ctx, index, moved);
    return text(await git(['write-tree'], { cwd: ctx.tmpDir, env }));
  } finally {
    await rm(index, { force: true });
    await rm(`${index}.lock`, { force: true });
  }
}

/**
 * The directory holding `rel` in the copy, opened one component at a time without following
 * links (fd-path.ts), with the directories on the way; undefined when one of them is not a
 * directory: a file or a link the sandbox put there is the sandbox's own, and a link would lead
 * this process, with the user's rights, out of the copy.
 */
async function openParents(root: string, rel: string): Promise<FileHandle[] | undefined> {
  const handles: FileHandle[] = [await open(root, O_DIR)];
  try {
    for (const name of path.posix.dirname(rel).split('/').filter((n) => n !== '.')) {
      handles.push(await openDir(handles.at(-1)!, name));
    }
    return handles;
  } catch (err) {
    await closeAll(handles);
    if (['ELOOP', 'ENOTDIR', 'ENOENT'].includes((err as NodeJS.ErrnoException).code ?? '')) return undefined;
    throw err;
  }
}

async function closeAll(handles: FileHandle[]): Promise<void> {
  for (const h of handles.reverse()) await h.close().catch(() => undefined);
}

/**
 * Deletes a file the user deleted, and the directories that leaves empty. A directory where the
 * file was (the sandbox made one) is the sandbox's own and stays: false then.
 */
async function removeFile(root: string, rel: string): Promise<boolean> {
  const dirs = await openParents(root, rel);
  // Something not a directory on the way: the file is not there to delete.
  if (!dirs) return true;
  try {
    const name = path.posix.basename(rel);
    const st = await lstatIn(dirs.at(-1)!, name);
    if (st?.isDirectory()) return false;
    if (st) await unlink(under(dirs.at(-1)!, name));
    const names = path.posix.dirname(rel).split('/').filter((n) => n !== '.');
    for (let i = names.length - 1; i >= 0; i--) {
      try {
        await rmdir(under(dirs[i], names[i]));
      } catch {
        break; // not empty (or already gone): so are its parents
      }
    }
    return true;
  } finally {
    await closeAll(dirs);
  }
}

/**
 * Whether the new content can be written at `rel` without destroying something of the
 * sandbox's: not where it has a directory, nor below one of its files (or links).
 */
async function writable(root: string, rel: string): Promise<boolean> {
  const dirs = await openParents(root, rel);
  if (!dirs) {
    // Missing directories git makes; anything else on the way is the sandbox's.
    return !(await somethingOnTheWay(root, rel));
  }
  try {
    return !(await lstatIn(dirs.at(-1)!, path.posix.basename(rel)))?.isDirectory();
  } finally {
    await closeAll(dirs);
  }
}

/** Whether a leading component of `rel` exists and is not a directory (lstat only: never followed). */
async function somethingOnTheWay(root: string, rel: string): Promise<boolean> {
  for (let dir = path.posix.dirname(rel); dir !== '.'; dir = path.posix.dirname(dir)) {
    const st = await lstat(fsPath(root, dir)).catch(() => undefined);
    if (st && !st.isDirectory()) return true;
  }
  return false;
}

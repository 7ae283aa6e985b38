import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { SessionContext } from './backend.js';
import type { Snapshot } from './base-snapshot.js';
import { timed } from './timing.js';
import { applyToIndex, isGone, treeChanges } from './tree-changes.js';
import { sealedGit } from './trusted-git.js';

/** Session-relative directory of the view indexes. */
export const VIEWS_DIR = 'views';

const built = new WeakMap<SessionContext, { file: string; ready: Promise<string> }>();

/**
 * The index a new sandbox's own git starts with: the user's HEAD tree (empty when unborn), so
 * that `git status` and `git diff` in it show the user's uncommitted changes as theirs, and the
 * model's work on top. Made from the session's base index (the snapshot's tree, with fresh stat
 * data), where the paths that differ from HEAD take HEAD's entries (or are dropped): those come
 * without stat data, every other entry keeps the base's. It is what a one-way merge (`read-tree
 * -m HEAD`) gives, at the cost of the differences rather than of the whole tree: `git status` in
 * a sandbox then re-reads only the files that differ from HEAD. A working tree that matches HEAD
 * needs none: the base index is that index. Built once per base (the session's, then each
 * refresh's) and shared: sandboxes hard-link or copy it, and git replaces an index by rename,
 * never in place. Only session files are read (the base index, the session's objects and the
 * user's), with the session's own git dir (trusted-git.ts).
 */
export function sandboxViewIndex(ctx: SessionContext): Promise<string> {
  const { baseIndex, snapshot } = ctx;
  const file = path.join(ctx.sessionDir, VIEWS_DIR, `${path.basename(baseIndex)}.${snapshot.parent ?? 'unborn'}`);
  const known = built.get(ctx);
  if (known?.file === file) return known.ready;
  const ready = buildViewIndex(ctx, file, baseIndex, snapshot);
  built.set(ctx, { file, ready });
  // A failed build is tried again by the next sandbox.
  ready.catch(() => {
    if (built.get(ctx)?.ready === ready) built.delete(ctx);
  });
  return ready;
}

async function buildViewIndex(ctx: SessionContext, file: string, baseIndex: string, snapshot: Snapshot): Promise<string> {
  const { parent } = snapshot;
  const changes = parent ? await treeChanges(ctx, snapshot.tree, parent) : [];
  if (parent && changes.length === 0) return baseIndex;
  // Made whole under another name and renamed: one that exists (a resumed session's) is complete.
  if (await stat(file).catch(() => undefined)) return file;
  const dir = path.dirname(file);
  // Not recursive: a session removed meanwhile (a failed open) is not made again.
  await mkdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  // Those of earlier bases: sandboxes made on them hold links or copies of their own.
  for (const name of await readdir(dir)) if (name !== path.basename(file)) await rm(path.join(dir, name), { force: true });
  const partial = `${file}.${randomBytes(4).toString('hex')}.partial`;
  const startedAt = performance.now();
  try {
    if (parent) {
      await copyFile(baseIndex, partial);
      // Removals first: a file where the base has a directory (or the other way round) goes in
      // once what stood in its way is gone.
      await applyToIndex(ctx, partial, [...changes.filter(isGone), ...changes.filter((c) => !isGone(c))]);
    } else {
      await sealedGit(ctx.plumbingGitDir)(['read-tree', '--empty'], { cwd: ctx.tmpDir, env: { ...ctx.objectEnv, GIT_INDEX_FILE: partial } });
    }
    await rename(partial, file);
    timed('git', startedAt, () => `view index for sandboxes built (${changes.length} paths differ from HEAD)`);
    return file;
  } finally {
    await rm(partial, { force: true });
    await rm(`${partial}.lock`, { force: true });
  }
}

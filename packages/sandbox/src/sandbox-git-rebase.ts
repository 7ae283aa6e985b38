import { constants } from 'node:fs';
import { open, readFile, rename, rm, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { BaseChange, SessionContext } from './backend.js';
import { text } from './git.js';
import { lstatIn, O_DIR, openDir, openOrMakeDir, under } from './fd-path.js';
import { sandboxHead } from './sandbox-git-head.js';
import { applyToIndex, isGone, treeChanges, type TreeChange } from './tree-changes.js';
import { sealedGit } from './trusted-git.js';

const READ_NOFOLLOW = { encoding: 'utf8', flag: constants.O_RDONLY | constants.O_NOFOLLOW } as const;

/**
 * Moves a sandbox's private git state along with a refresh of the session's snapshot, so that
 * its HEAD stays where the user's is (see sandboxHead) and `git status` and `git diff` run by
 * commands keep showing the user's uncommitted changes and the sandbox's own work. Only while it
 * stands where the session put it: HEAD as sandboxHead(from) has it, its branch at the same
 * commit. After anything else (a commit made in the sandbox despite its hooks, a branch switched
 * to) its history and index are its own and stay as they are.
 *
 * When the user's HEAD commit moved, the index takes the new HEAD tree's entries at the paths
 * that differ (other entries, stat data included, stay), then the branch, then HEAD move: in that
 * order, so a crash in between leaves HEAD behind and a repeat does it all again. When only the
 * user's working tree changed, the sandbox's git needs nothing: its files changed beneath it.
 */
export async function moveSandboxGit(ctx: SessionContext, gitDir: string, change: BaseChange): Promise<void> {
  // Commands own this git dir: links in it (to the user's .git, say) are not followed, and it is
  // held open so that a link swapped in for it later leads nowhere (see fd-path.ts).
  const dir = await open(gitDir, O_DIR).catch(() => undefined);
  if (!dir) return;
  try {
    if (!(await lstatIn(dir, 'HEAD'))?.isFile()) return;
    const head = (await readFile(under(dir, 'HEAD'), READ_NOFOLLOW).catch(() => '')).trim();
    // Sandboxes made before HEAD followed the user's stood detached at the snapshot commit.
    if (head === change.from.commit) return await moveLegacy(ctx, dir, change);
    const from = sandboxHead(change.from);
    const to = sandboxHead(change.to);
    if (head !== from.head || (from.head === to.head && from.commit === to.commit)) return;
    if (from.branch && (await readRef(dir, from.branch)) !== (from.commit ?? '')) return;
    if (from.commit !== to.commit && (await lstatIn(dir, 'index'))?.isFile()) {
      await applyToIndex(ctx, pinned(dir, 'index'), await headChanges(ctx, from.commit, to.commit));
    }
    if (to.branch) await setRef(dir, to.branch, to.commit);
    // A branch HEAD left keeps its pin, where the user had it when it was theirs.
    if (to.head !== from.head) await replaceFile(dir, 'HEAD', `${to.head}\n`);
  } finally {
    await dir.close();
  }
}

/** The old form: the index takes the new snapshot's entries at the changed paths, then HEAD its commit. */
async function moveLegacy(ctx: SessionContext, dir: FileHandle, change: BaseChange): Promise<void> {
  if ((await lstatIn(dir, 'index'))?.isFile()) await applyToIndex(ctx, pinned(dir, 'index'), change.changes);
  await replaceFile(dir, 'HEAD', `${change.to.commit}\n`);
}

/**
 * `name` in `dir` as a path another process (git) can use: it reaches our descriptor through our
 * pid, not /proc/self. git replaces an index by rename, so a seeded index hard-linked to the
 * session's stays intact.
 */
function pinned(dir: FileHandle, name: string): string {
  return path.join(`/proc/${process.pid}/fd/${dir.fd}`, name);
}

/** What differs between two HEAD commits' trees (an unborn HEAD has the empty tree). */
async function headChanges(ctx: SessionContext, from: string | undefined, to: string | undefined): Promise<TreeChange[]> {
  const empty = from && to ? '' : await emptyTree(ctx);
  const changes = await treeChanges(ctx, from ?? empty, to ?? empty);
  // Removals first: a file where a directory was (or the other way round) goes in once what
  // stood in its way is gone.
  return [...changes.filter(isGone), ...changes.filter((c) => !isGone(c))];
}

async function emptyTree(ctx: SessionContext): Promise<string> {
  return text(await sealedGit(ctx.plumbingGitDir)(['hash-object', '-t', 'tree', '--stdin'], { cwd: ctx.tmpDir, input: '' }));
}

/**
 * The directories holding `ref` (`refs/heads/…`), opened one at a time without following links
 * (made when `make`), innermost last; 'missing' when one is not there, undefined when something
 * other than a directory stands in the way.
 */
async function refDirs(dir: FileHandle, ref: string, make: boolean): Promise<FileHandle[] | 'missing' | undefined> {
  const handles: FileHandle[] = [];
  try {
    let at = dir;
    for (const name of ref.split('/').slice(0, -1)) {
      at = await (make ? openOrMakeDir(at, name) : openDir(at, name));
      handles.push(at);
    }
    return handles;
  } catch (err) {
    await closeAll(handles);
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return 'missing';
    if (code === 'ENOTDIR' || code === 'ELOOP') return undefined;
    throw err;
  }
}

async function closeAll(handles: FileHandle[]): Promise<void> {
  for (const h of handles.reverse()) await h.close().catch(() => undefined);
}

/**
 * The commit a loose ref in `dir` holds; '' when there is none; undefined when something other
 * than a file stands there (a link, a whiteout): not ours, so never taken for the pin.
 */
async function readRef(dir: FileHandle, ref: string): Promise<string | undefined> {
  const dirs = await refDirs(dir, ref, false);
  if (dirs === 'missing') return '';
  if (!dirs) return undefined;
  try {
    const at = dirs.at(-1)!;
    const name = path.posix.basename(ref);
    const st = await lstatIn(at, name);
    if (!st) return '';
    if (!st.isFile()) return undefined;
    return (await readFile(under(at, name), READ_NOFOLLOW)).trim();
  } finally {
    await closeAll(dirs);
  }
}

/**
 * Points the loose ref `ref` in `dir` at `commit`, or removes it (undefined). Something other
 * than a directory on the way (put there by a command since the check) fails the move, which the
 * refresh reports (see SandboxSession.rebaseAll): never followed.
 */
async function setRef(dir: FileHandle, ref: string, commit: string | undefined): Promise<void> {
  const dirs = await refDirs(dir, ref, commit !== undefined);
  if (dirs === 'missing') return;
  if (!dirs) throw new Error(`something other than a directory stands where the sandbox's ${ref} would be`);
  try {
    const at = dirs.at(-1)!;
    const name = path.posix.basename(ref);
    if (!commit) {
      await unlink(under(at, name)).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
      return;
    }
    // Written beside HEAD, where git looks for no refs, then renamed into place.
    const tmp = 'REF.refresh';
    await rm(under(dir, tmp), { force: true });
    await writeFile(under(dir, tmp), `${commit}\n`, { flag: 'wx' });
    await rename(under(dir, tmp), under(at, name));
  } finally {
    await closeAll(dirs);
  }
}

/** Replaces `name` in `dir` by a new file: a link a command left under the temporary name is replaced, never written through. */
async function replaceFile(dir: FileHandle, name: string, content: string): Promise<void> {
  const tmp = `${name}.refresh`;
  await rm(under(dir, tmp), { force: true });
  await writeFile(under(dir, tmp), content, { flag: 'wx' });
  await rename(under(dir, tmp), under(dir, name));
}

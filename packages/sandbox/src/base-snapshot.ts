import { randomBytes } from 'node:crypto';
import { copyFileSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { GitError } from './errors.js';
import { cleanGitEnv, text } from './git.js';
import { runProcess } from './run-process.js';
import { timed } from './timing.js';
import type { RepoInfo } from './repo.js';
import { USER_REPO_SWITCHES, userTreeArgs, userTreeGit } from './trusted-git.js';

/** A commit of the user's working tree as it was when the session started. */
export interface Snapshot {
  commit: string;
  tree: string;
  /** The user's HEAD at the time, or null in a repository without commits. */
  parent: string | null;
  /**
   * The branch (`refs/heads/…`) the user's HEAD named at the time, unborn or not; absent when
   * HEAD was detached (and in records written before it was kept).
   */
  branch?: string;
}

/**
 * Objects we create (snapshot blobs, diff trees) go to the session's own object directory, with
 * the user's objects as an alternate: nothing is written into the user's repository. A folder's
 * private git dir holds no objects (every snapshot's are its session's), so it lends none.
 */
export function objectEnv(repo: RepoInfo, objectsDir: string): Record<string, string> {
  if (repo.folder) return { GIT_OBJECT_DIRECTORY: objectsDir };
  return {
    GIT_OBJECT_DIRECTORY: objectsDir,
    GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(repo.commonDir, 'objects'),
  };
}

/**
 * The index a snapshot starts from, whose stat data spares hashing the files that did not change:
 * in a repository the user's own. A folder has none: its session's last snapshot index serves,
 * kept beside the session's object store (`objectsDir`), which holds every blob it names (an
 * index naming blobs of a store since deleted, another session's, would make the next tree fail).
 */
function startingIndex(repo: RepoInfo, objectsDir: string): string {
  return repo.folder ? folderStatCache(objectsDir) : path.join(repo.gitDir, 'index');
}

function folderStatCache(objectsDir: string): string {
  return path.join(path.dirname(objectsDir), 'folder.index');
}

/**
 * A folder's snapshot index becomes its session's stat cache (see startingIndex). Replaced whole
 * (rename), so a snapshot running meanwhile reads one or the other.
 */
function keepFolderIndex(repo: RepoInfo, objectsDir: string, index: string): void {
  if (!repo.folder) return;
  try {
    renameSync(index, folderStatCache(objectsDir));
  } catch {
    // The session's directory gone (closed meanwhile): nothing will snapshot into it again.
  }
}

/**
 * git in the user's repository (userTreeGit): their config (it is their tree), no fsmonitor or
 * hooks; and no untracked cache, which is tied to their real index.
 */
const NO_UNTRACKED_CACHE = ['-c', 'core.untrackedCache=false'];

const IDENTITY = {
  GIT_AUTHOR_NAME: 'infinity-code',
  GIT_AUTHOR_EMAIL: 'infinity-code@localhost',
  GIT_COMMITTER_NAME: 'infinity-code',
  GIT_COMMITTER_EMAIL: 'infinity-code@localhost',
};

/**
 * The tree of the working tree as it is now, built with a temporary index: a copy of the user's
 * index keeps the stat cache (so only changed files are hashed), `add -A` picks up modified and
 * untracked files, and the user's index, HEAD, branch and files are never written. New blobs go
 * to `objectsDir`.
 */
export async function workingTreeTree(repo: RepoInfo, objectsDir: string, scratchDir: string): Promise<string> {
  await mkdir(scratchDir, { recursive: true });
  const index = path.join(scratchDir, `snapshot-${process.pid}-${randomBytes(4).toString('hex')}.index`);
  await copyFile(startingIndex(repo, objectsDir), index).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  const env = { ...objectEnv(repo, objectsDir), GIT_INDEX_FILE: index };
  const git = userTreeGit(repo);
  try {
    await git([...NO_UNTRACKED_CACHE, 'add', '-A'], { cwd: repo.root, env });
    const tree = text(await git(['write-tree'], { cwd: repo.root, env }));
    keepFolderIndex(repo, objectsDir, index);
    return tree;
  } finally {
    await rm(index, { force: true });
    await rm(`${index}.lock`, { force: true });
  }
}

// The snapshot's steps in one process: `git add -A` into the temporary index, the tree, HEAD and
// the commit, and with IC_BASE set the base's checkout: each git process costs a spawn of this
// (large) process and a trip through its event loop, and a session's first tool call waits for
// all of them. "$@" is git's own arguments (USER_REPO_SWITCHES); prints "<tree> <commit> <HEAD> <branch>"
// (each of the last two possibly empty).
// The base is checked out with the user's git dir and config (it is their tree, filters
// included), into its own index (IC_BASE_INDEX), which then holds fresh stat data for every base file.
// A pooled base (IC_MERGE=-m) is moved by a one-way merge from its own index: only entries whose
// content differs are checked and written, the others are taken from the index as they are (with
// --reset, every file of the base would be lstat'ed again, O(repository) at every open). That is
// safe because a pooled base is written by nothing but this checkout (see base-pool.ts). Without
// one, the full checkout (the long part of a first open: seconds at 50,000 files) starts at once
// from HEAD's tree, beside the snapshot, and the same one-way merge then brings it to the
// snapshot: only the files the user changed since HEAD are written twice.
const SNAPSHOT_SCRIPT = `
pre=
# A failure ends the run only once the checkout started beside it is over: nothing may still be
# writing into the base when the caller removes it.
fail() { c=$?; [ -z "$pre" ] || wait "$pre"; exit $c; }
# HEAD's commit, tree and branch ("HEAD" when detached) in one run ("--": revisions, whatever
# files are named); an unborn HEAD has only its branch.
nl='
'
parent= head= branch=
if ids=$(git "$@" rev-parse 'HEAD^{commit}' 'HEAD^{tree}' --symbolic-full-name HEAD -- 2>/dev/null); then
  parent=\${ids%%"$nl"*}; rest=\${ids#*"$nl"}; head=\${rest%%"$nl"*}; rest=\${rest#*"$nl"}; branch=\${rest%%"$nl"*}
else
  branch=$(git "$@" symbolic-ref -q HEAD 2>/dev/null)
fi
if [ -n "$IC_BASE" ] && [ "$IC_MERGE" = --reset ] && [ -n "$head" ]; then
  GIT_INDEX_FILE=$IC_BASE_INDEX git "$@" --git-dir="$IC_USER_GIT_DIR" --work-tree="$IC_BASE" -c "checkout.workers=$IC_WORKERS" read-tree --reset -u "$head" &
  pre=$!
fi
git "$@" -c core.untrackedCache=false add -A || fail
tree=$(git "$@" write-tree) || fail
commit=$(git "$@" commit-tree "$tree" \${parent:+-p "$parent"} -m 'infinity-code: snapshot of the working tree') || fail
if [ -n "$IC_BASE" ]; then
  merge=$IC_MERGE
  if [ -n "$pre" ]; then wait "$pre" || exit $?; merge=-m; fi
  # A working tree that matches HEAD: the checkout above is the snapshot already.
  if [ -z "$pre" ] || [ "$tree" != "$head" ]; then
    GIT_INDEX_FILE=$IC_BASE_INDEX git "$@" --git-dir="$IC_USER_GIT_DIR" --work-tree="$IC_BASE" -c "checkout.workers=$IC_WORKERS" read-tree $merge -u "$tree" || exit $?
  fi
fi
echo "$tree $commit $parent $branch"
`;

/**
 * Snapshots the working tree (see workingTreeTree) as a commit on the user's HEAD, which stays
 * where it is. With `base`, also checks the snapshot out into `base.dir` with its own index at
 * `base.index`, outside the repository; sandboxes copy that index, so `git status` inside them
 * does not re-hash the tree. A `pooled` base (a checkout with its index, see base-pool.ts) is
 * moved to the snapshot path by path: only what differs is read and written.
 */
export async function takeSnapshot(
  repo: RepoInfo,
  objectsDir: string,
  scratchDir: string,
  base?: { dir: string; index: string; pooled: boolean },
): Promise<Snapshot> {
  // Synchronous up to the git process (a copy of the user's index is a few megabytes at most): a
  // session's first tool call waits for this run (see writeJsonAtomic in registry.ts).
  mkdirSync(scratchDir, { recursive: true });
  if (base) mkdirSync(base.dir, { recursive: true });
  const index = path.join(scratchDir, `snapshot-${process.pid}-${randomBytes(4).toString('hex')}.index`);
  try {
    copyFileSync(startingIndex(repo, objectsDir), index);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  try {
    // Set either way: a variable of the same name in our own environment must not count.
    const checkout: Record<string, string> = base
      ? {
          IC_BASE: base.dir,
          IC_BASE_INDEX: base.index,
          IC_USER_GIT_DIR: repo.gitDir,
          IC_WORKERS: String(checkoutWorkers()),
          IC_MERGE: base.pooled ? '-m' : '--reset',
        }
      : { IC_BASE: '' };
    const env = cleanGitEnv({ ...objectEnv(repo, objectsDir), ...IDENTITY, GIT_INDEX_FILE: index, ...checkout });
    const startedAt = performance.now();
    const out = await runProcess('/bin/sh', ['-c', SNAPSHOT_SCRIPT, 'snapshot', ...userTreeArgs(repo), ...USER_REPO_SWITCHES], { cwd: repo.root, env });
    timed('git', startedAt, () => `snapshot${base ? (base.pooled ? ' and base moved to it' : ' and base checked out') : ''}`);
    if (out.exitCode !== 0) {
      throw new GitError(['add', '-A'], out.stderr.toString('utf8') || String(out.error?.message ?? out.signal ?? ''), out.exitCode, out.error);
    }
    // Ref names hold no spaces (git check-ref-format); a missing parent leaves its field empty.
    const [tree, commit, parent, branch] = out.stdout.toString('utf8').trim().split(' ');
    keepFolderIndex(repo, objectsDir, index);
    // A folder's private HEAD names a branch of ours, never the user's.
    return { tree: tree, commit: commit, parent: parent || null, ...(branch?.startsWith('refs/heads/') && !repo.folder ? { branch } : {}) };
  } finally {
    // Synchronous: two unlinks, where fs.promises.rm walks each path through the thread pool,
    // which session start-up keeps busy, while the first tool call waits for this to return.
    rmSync(index, { force: true });
    rmSync(`${index}.lock`, { force: true });
  }
}

/**
 * Parallel checkout workers for materialising the base. Writing tens of thousands of small files
 * waits on the filesystem (file creation, the journal) far more than on the CPU, so more workers
 * than cores keep the disk busy: on a 2-core VM with other I/O going on, 8 workers checked out
 * 50,000 files in well under half the time one took, and no slower on an idle disk.
 */
export function checkoutWorkers(cores = availableParallelism()): number {
  return Math.min(32, Math.max(8, cores * 2));
}

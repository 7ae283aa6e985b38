import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { text } from './git.js';
import type { RepoInfo } from './repo.js';
import { userRepoGit } from './trusted-git.js';

/** A commit of the user's working tree as it was when the session started. */
export interface Snapshot {
  commit: string;
  tree: string;
  /** The user's HEAD at the time, or null in a repository without commits. */
  parent: string | null;
}

/**
 * Objects we create (snapshot blobs, diff trees) go to the session's own object directory, with
 * the user's objects as an alternate: nothing is written into the user's repository.
 */
export function objectEnv(repo: RepoInfo, objectsDir: string): Record<string, string> {
  return {
    GIT_OBJECT_DIRECTORY: objectsDir,
    GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(repo.commonDir, 'objects'),
  };
}

/**
 * git in the user's repository: their config (it is their tree), no fsmonitor or hooks; and no
 * untracked cache, which is tied to their real index.
 */
const git = userRepoGit();
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
  await copyFile(path.join(repo.gitDir, 'index'), index).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
  const env = { ...objectEnv(repo, objectsDir), GIT_INDEX_FILE: index };
  try {
    await git([...NO_UNTRACKED_CACHE, 'add', '-A'], { cwd: repo.root, env });
    return text(await git(['write-tree'], { cwd: repo.root, env }));
  } finally {
    await rm(index, { force: true });
    await rm(`${index}.lock`, { force: true });
  }
}

/** Snapshots the working tree (see workingTreeTree) as a commit on the user's HEAD, which stays where it is. */
export async function takeSnapshot(repo: RepoInfo, objectsDir: string, scratchDir: string): Promise<Snapshot> {
  const env = { ...objectEnv(repo, objectsDir), ...IDENTITY };
  // HEAD is read beside the tree's making, not after it: one process less on the way to the base.
  const [tree, headOut] = await Promise.all([
    workingTreeTree(repo, objectsDir, scratchDir),
    git(['rev-parse', '-q', '--verify', 'HEAD^{commit}'], { cwd: repo.root, env, okExitCodes: [1] }),
  ]);
  const parent = headOut.exitCode === 0 ? text(headOut) : null;
  const commit = text(
    await git(['commit-tree', tree, ...(parent ? ['-p', parent] : []), '-m', 'infinity-code: snapshot of the working tree'], {
      cwd: repo.root,
      env,
    }),
  );
  return { commit, tree, parent };
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

/**
 * Checks the snapshot out once into `baseDir` (outside the repository) with its own index, which
 * then holds fresh stat data for every base file: sandboxes copy it so `git status` inside them
 * does not re-hash the tree.
 */
export async function materializeBase(
  repo: RepoInfo,
  snapshot: Snapshot,
  objectsDir: string,
  baseDir: string,
  baseIndex: string,
): Promise<void> {
  await mkdir(baseDir, { recursive: true });
  const env = { ...objectEnv(repo, objectsDir), GIT_INDEX_FILE: baseIndex };
  await git(
    [
      `--git-dir=${repo.gitDir}`,
      `--work-tree=${baseDir}`,
      '-c',
      `checkout.workers=${checkoutWorkers()}`,
      'read-tree',
      '--reset',
      '-u',
      snapshot.tree,
    ],
    { cwd: baseDir, env },
  );
}

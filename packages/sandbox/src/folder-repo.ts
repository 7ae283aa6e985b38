// A folder outside every git repository, worked on as it is. Its snapshots need a git dir, and
// none may appear in the user's folder: a private one is kept in the state dir, one per folder
// (by its real path), and git is always told both it and the folder (--git-dir, --work-tree).
// It holds our config and ignore rules and nothing else: no index (each session keeps the stat
// cache of its snapshots beside its own objects, see base-snapshot.ts), no objects (each
// session's store has its snapshots'), no commits or refs; and no command's view contains it (it
// lies under the state dir, which sandboxes never see).
//
// Light on purpose (node: modules only): the CLI checks a folder before its first frame, through
// the subpath `@infinity-code/sandbox/repo-problems`, without loading the package.
import { createHash, randomBytes } from 'node:crypto';
import { type Dirent, mkdirSync, readdirSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The most files a folder without a repository may hold. Its first snapshot hashes every file
 * and checks them all out as the sandboxes' base (some 6 s per 50,000 files on a 2-core VM, see
 * the sandbox study), with no .gitignore of a repository to leave build output out. A repository
 * has no such bound: `git init` (with a .gitignore) is the way for larger trees.
 */
export const MAX_FOLDER_FILES = 100_000;

/** Where the folders' private git dirs live, under the state dir. */
const FOLDERS_DIR = 'folders';

/** What a folder's private dir records of it (for gc, and to tell a hash collision). */
export interface FolderMeta {
  version: 1;
  /** The folder's real path. */
  root: string;
}

/**
 * Where the user's state lives: `$XDG_STATE_HOME/infinity-code`, or `~/.local/state/infinity-code`.
 * Sandboxes are stored there, never in the repository (overlay refuses storage inside a lower
 * layer, and the user's tree must stay untouched).
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_STATE_HOME;
  const base = xdg && path.isAbsolute(xdg) ? xdg : path.join(env.HOME || os.homedir(), '.local', 'state');
  return path.join(base, 'infinity-code');
}

/** The private directory of the folder at `root` (a real path): its git dir and notes. */
export function folderStateDir(stateDir: string, root: string): string {
  return path.join(stateDir, FOLDERS_DIR, createHash('sha256').update(root).digest('hex').slice(0, 24));
}

/** The parent of every folder's private directory (for gc). */
export function foldersDir(stateDir: string): string {
  return path.join(stateDir, FOLDERS_DIR);
}

/**
 * The private git dir of the folder at `root` (a real path), made when missing: synchronous
 * (a few small files), whole under a temporary name then renamed into place, so two processes
 * starting at once both end up with the same complete one. Written by hand rather than by
 * `git init`, which would copy the user's template directory (hooks included) into it.
 */
export function ensureFolderGitDir(stateDir: string, root: string): string {
  const dir = folderStateDir(stateDir, root);
  const gitDir = path.join(dir, 'git');
  if (isFile(path.join(gitDir, 'HEAD'))) return gitDir;
  mkdirSync(dir, { recursive: true });
  const meta: FolderMeta = { version: 1, root };
  writeFileSync(path.join(dir, 'folder.json'), `${JSON.stringify(meta)}\n`);
  const partial = `${gitDir}.${process.pid}-${randomBytes(3).toString('hex')}.partial`;
  try {
    for (const sub of ['objects', 'refs/heads', 'info']) mkdirSync(path.join(partial, sub), { recursive: true });
    // No setting that names a program: this git dir is ours, and only ours is trusted in it.
    writeFileSync(path.join(partial, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = false\n');
    // Unborn, and never born: snapshots are commits without a branch.
    writeFileSync(path.join(partial, 'HEAD'), 'ref: refs/heads/infinity-code-folder\n');
    // As in most repositories: installed packages are no part of the project. They are shared
    // with sandboxes copy-on-write (heavy dirs), not snapshotted file by file.
    writeFileSync(path.join(partial, 'info', 'exclude'), 'node_modules/\n');
    try {
      renameSync(partial, gitDir);
    } catch (err) {
      // Another process made it first: theirs is as good.
      if (!isFile(path.join(gitDir, 'HEAD'))) throw err;
    }
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return gitDir;
}

export interface FolderCheck {
  /** The user's home directory (HOME), which is never a project folder. */
  home?: string;
  /** Refuse a folder holding more files than this (see countFolderFiles); unbounded when absent. */
  maxFiles?: number;
}

/**
 * Why the folder at `root` (a real path) must not be worked on as a folder without a repository,
 * or undefined: `/` and the home directory (or a directory holding it) are everything the user
 * has, not a project, and a folder beyond `maxFiles` would take minutes to snapshot.
 */
export function folderProblem(root: string, o: FolderCheck = {}): string | undefined {
  const cd = 'cd into a project folder and run Infinity Code there';
  if (path.dirname(root) === root) return `${root} is the whole filesystem, not a project folder: ${cd}.`;
  const home = o.home ? realOr(o.home) : undefined;
  if (home !== undefined && root === home) {
    return `${root} is your home directory, not a project folder: ${cd} (or in a git repository).`;
  }
  if (home !== undefined && isWithin(root, home)) {
    return `${root} holds your home directory, which is no project folder: ${cd}.`;
  }
  if (o.maxFiles === undefined) return undefined;
  const count = countFolderFiles(root, o.maxFiles);
  if (count <= o.maxFiles) return undefined;
  return (
    `${root} is not a git repository and holds more than ${o.maxFiles.toLocaleString('en-US')} files (node_modules and ` +
    'nested repositories not counted). Outside a repository Infinity Code snapshots the whole folder, which is too slow ' +
    `at this size: ${cd}, or make this one a git repository (\`git init\`, with a .gitignore for build output and data).`
  );
}

/**
 * How many files the folder at `root` holds, counted up to `limit + 1` (then it stops): a walk
 * that leaves out node_modules, nested repositories (one entry each in a snapshot) and our
 * `.infinity`, but not what a .gitignore ignores (an upper bound, then). Some 50 ms per 50,000
 * files on a warm cache, a few for a usual project.
 */
export function countFolderFiles(root: string, limit: number): number {
  let count = 0;
  const dirs = [root];
  while (dirs.length > 0) {
    const dir = dirs.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      continue; // Unreadable: git would skip it too.
    }
    if (dir !== root && entries.some((e) => e.name === '.git')) {
      if (++count > limit) return count;
      continue;
    }
    for (const e of entries) {
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== '.git' && !(dir === root && e.name === '.infinity')) dirs.push(path.join(dir, e.name));
      } else if (++count > limit) {
        return count;
      }
    }
  }
  return count;
}

/**
 * What the user is told the first time Infinity Code works on the folder at `root` (a real path)
 * without a repository, or undefined when they were told before; telling is recorded in the
 * folder's private directory, so the next run says nothing.
 */
export function takeFolderNotice(stateDir: string, root: string): string | undefined {
  const dir = folderStateDir(stateDir, root);
  const marker = path.join(dir, 'noticed');
  if (isFile(marker)) return undefined;
  mkdirSync(dir, { recursive: true });
  writeFileSync(marker, `${new Date().toISOString()}\n`);
  return (
    `${root} is not a git repository: Infinity Code keeps its snapshots in ${stateDir}; your folder is not changed ` +
    'until you accept.'
  );
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** True when `inner` is `outer` or lies below it. */
function isWithin(outer: string, inner: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

// Why the repository holding a directory could not be found, told apart: git is not installed,
// there is no repository, or git fails on one. `git rev-parse` alone can't tell the last two
// apart: a repository whose .git/HEAD is damaged is not one to git, which then says "not a git
// repository" as it would in a plain directory. A `.git` found on the way up tells them apart.
// Also the quick lookup of a plain repository (plainRepo), which spares start-up a git process.
//
// Light on purpose (node:fs and node:path only): the CLI runs this check before its first frame,
// through the subpath `@infinity-code/sandbox/repo-problems`, without loading the package.
import { lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

export { onPath } from './path-lookup.js';
export {
  countFolderFiles,
  defaultStateDir,
  ensureFolderGitDir,
  folderProblem,
  folderStateDir,
  MAX_FOLDER_FILES,
  takeFolderNotice,
  type FolderCheck,
} from './folder-repo.js';

/** A repository found by plainRepo: a `.git` directory at `root` (what RepoInfo says of it). */
export interface PlainRepo {
  root: string;
  gitDir: string;
  commonDir: string;
  dotGitIsDir: true;
}

export type RepoProblemCode = 'git-missing' | 'not-a-repo' | 'git-failed';

export interface RepoProblem {
  code: RepoProblemCode;
  /** Says what is wrong and what to do. */
  message: string;
  /**
   * A directory in no repository at all (no `.git` at or above it): a folder Infinity Code can
   * work on as it is (see folder-repo.ts), where the caller allows that.
   */
  folder?: true;
}

/** How `git rev-parse` failed in `cwd`: it could not start (`spawnCode`), or it exited with `stderr`. */
export interface GitFailure {
  /** The errno code of a git that could not be started (ENOENT: not on PATH). */
  spawnCode?: string;
  stderr?: string;
  exitCode?: number | null;
}

export function explainRepoProblem(cwd: string, failure: GitFailure): RepoProblem {
  // A spawn in a directory that is gone fails with ENOENT too, as if git were missing.
  if (!isDirectory(cwd)) {
    return { code: 'not-a-repo', message: `${cwd} does not exist or is not a directory. Run Infinity Code inside a git repository.` };
  }
  if (failure.spawnCode === 'ENOENT') {
    return {
      code: 'git-missing',
      message:
        'git is not installed, or not on your PATH. Infinity Code needs it: it snapshots your repository with git and ' +
        'applies the agent\'s changes with it. Install git (for example `sudo apt-get install git`), make sure ' +
        '`git --version` works in this shell, and run again.',
    };
  }
  if (failure.spawnCode !== undefined) {
    return {
      code: 'git-failed',
      message:
        `git could not be started (${failure.spawnCode}). Check that the git on your PATH is a working program ` +
        '(`git --version`), and run again.',
    };
  }
  const said = gitSaid(failure.stderr);
  const dotGit = findDotGit(cwd);
  if (/not a git repository/i.test(failure.stderr ?? '') && dotGit === undefined) {
    return {
      code: 'not-a-repo',
      message:
        `${cwd} is not inside a git repository. Infinity Code edits a sandboxed copy of a git repository and shows ` +
        'you the diff; run it inside one (or create one with `git init`).',
      folder: true,
    };
  }
  // Inside a .git directory, or a bare repository: a repository, but no working tree to edit.
  if (/must be run in a work tree/i.test(failure.stderr ?? '')) {
    return {
      code: 'not-a-repo',
      message:
        `${cwd} is inside a repository's .git directory or a bare repository, which has no working tree. Run Infinity ` +
        'Code in the working tree of a checkout.',
    };
  }
  if (dotGit !== undefined) {
    const dir = path.dirname(dotGit);
    return {
      code: 'git-failed',
      message:
        `git cannot read the repository in ${dir} (git says: ${said}). Its ${dotGit} may be damaged (a broken ` +
        `.git/HEAD is a common cause): run \`git status\` in ${dir} to see what is wrong, repair it, and run again.`,
    };
  }
  return {
    code: 'git-failed',
    message:
      `git failed in ${cwd} (exit ${failure.exitCode ?? '?'}; git says: ${said}). Run \`git status\` there to see what ` +
      'is wrong, fix it, and run again.',
  };
}

/** The nearest `.git` (a directory, or the file of a linked worktree) at or above `dir`. */
export function findDotGit(dir: string): string | undefined {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const candidate = path.join(current, '.git');
    try {
      if (lstatSync(candidate, { throwIfNoEntry: false }) !== undefined) return candidate;
    } catch {
      // A directory we may not look into holds no repository we could use: look further up.
    }
    if (path.dirname(current) === current) return undefined;
  }
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch {
    return false;
  }
}

/** git's own words, on one line: its last lines say what failed. */
function gitSaid(stderr: string | undefined): string {
  const lines = (stderr ?? '').split('\n').map((l) => l.trim()).filter(Boolean);
  const text = lines.slice(-3).join(' / ');
  if (text === '') return 'nothing';
  return text.length > 300 ? `${text.slice(0, 299)}…` : text;
}

/**
 * The common layout, found without running git (a session's open waits for this, and a git
 * process costs a spawn of this large process): the nearest directory at or above `anyPath`
 * holding a `.git` directory with a HEAD, on the same filesystem, owned by this user, whose
 * config names no other work tree, no include and no bare repository. Anything else (a `.git`
 * file of a linked worktree or submodule, GIT_CEILING_DIRECTORIES, a path inside `.git`...) is
 * left to git, as is the error for a path in no repository.
 */
export function plainRepo(anyPath: string): PlainRepo | undefined {
  if (process.env.GIT_CEILING_DIRECTORIES || process.env.GIT_DISCOVERY_ACROSS_FILESYSTEM) return undefined;
  // Synchronous: a handful of stat calls, which a session's open waits for (the CLI's start-up, a session's open).
  let dir = tryFs(() => realpathSync(anyPath));
  if (dir === undefined || dir.split(path.sep).includes('.git')) return undefined;
  let st = tryFs(() => statSync(dir!));
  if (!st?.isDirectory()) return undefined;
  const device = st.dev;
  const uid = process.getuid?.();
  for (;;) {
    const dotGit = path.join(dir, '.git');
    const found = tryFs(() => lstatSync(dotGit));
    if (found) {
      if (!found.isDirectory() || found.dev !== device || (uid !== undefined && uid !== 0 && found.uid !== uid)) return undefined;
      const head = tryFs(() => readFileSync(path.join(dotGit, 'HEAD'), 'utf8'));
      const commondir = tryFs(() => lstatSync(path.join(dotGit, 'commondir')));
      const config = tryFs(() => readFileSync(path.join(dotGit, 'config'), 'utf8'));
      // A HEAD git would not accept (damaged) is left to git, whose refusal names the problem.
      if (head === undefined || !VALID_HEAD.test(head) || commondir || config === undefined) return undefined;
      if (/^\s*(worktree\s*=|bare\s*=\s*(true|yes|on|1)\b|\[include)/im.test(config)) return undefined;
      return { root: dir, gitDir: dotGit, commonDir: dotGit, dotGitIsDir: true };
    }
    const parent = path.dirname(dir);
    if (parent === dir) return undefined;
    st = tryFs(() => statSync(parent));
    if (!st || st.dev !== device) return undefined;
    dir = parent;
  }
}

/** What git accepts in HEAD: a symbolic ref under refs/, or an object id (SHA-1 or SHA-256). */
const VALID_HEAD = /^(?:ref: refs\/\S+|[0-9a-f]{40}|[0-9a-f]{64})\s*$/;

function tryFs<T>(fn: () => T): T | undefined {
  try {
    return fn();
  } catch {
    return undefined;
  }
}

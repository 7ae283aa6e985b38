// Why the repository holding a directory could not be found, told apart: git is not installed,
// there is no repository, or git fails on one. `git rev-parse` alone can't tell the last two
// apart: a repository whose .git/HEAD is damaged is not one to git, which then says "not a git
// repository" as it would in a plain directory. A `.git` found on the way up tells them apart.
//
// Light on purpose (node:fs and node:path only): the CLI runs this check before its first frame,
// through the subpath `@infinity-code/sandbox/repo-problems`, without loading the package.
import { lstatSync, statSync } from 'node:fs';
import path from 'node:path';

export type RepoProblemCode = 'git-missing' | 'not-a-repo' | 'git-failed';

export interface RepoProblem {
  code: RepoProblemCode;
  /** Says what is wrong and what to do. */
  message: string;
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

import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
// The light subpath: this runs before the TUI's first frame, the sandbox package loads later.
import {
  defaultStateDir,
  ensureFolderGitDir,
  explainRepoProblem,
  folderProblem,
  MAX_FOLDER_FILES,
  onPath,
  plainRepo,
  type GitFailure,
  type RepoProblem,
  type RepoProblemCode,
} from '@infinity-code/sandbox/repo-problems';
import { EXIT, UserError, type ExitCode } from './exit-codes.js';

/** Where a session works: a git repository's root, or a folder in no repository. */
export interface Project {
  root: string;
  /**
   * Set for a folder in no git repository, worked on as it is (the current directory is the
   * root): its snapshots are kept in a private git dir in the state dir, never in the folder.
   */
  folder?: {
    /** The state dir its private git dir is in (the sandboxes' state dir). */
    stateDir: string;
    /** The private git dir: git over the folder is told it and the folder (see projectGitArgs). */
    gitDir: string;
  };
}

/** What git needs to be told to see the project's files with their ignore rules (nothing in a repository). */
export function projectGitArgs(project: Project): string[] {
  return project.folder ? [`--git-dir=${project.folder.gitDir}`, `--work-tree=${project.root}`] : [];
}

/**
 * The project `cwd` is in: the repository holding it, or else `cwd` itself as a folder without a
 * repository, unless that folder is one no project is (`/`, the home directory) or too large to
 * snapshot (MAX_FOLDER_FILES): a UserError saying so, as for a repository git can't use.
 */
export function requireProject(cwd: string, env: NodeJS.ProcessEnv): Project {
  const found = gitRoot(cwd);
  if (typeof found === 'string') return { root: found };
  if (!found.folder) throw new UserError(found.message, EXIT_OF[found.code]);
  const root = realpathSync(cwd);
  const stateDir = defaultStateDir(env);
  const problem = folderProblem(root, { home: env.HOME || homedir(), maxFiles: MAX_FOLDER_FILES });
  if (problem !== undefined) throw new UserError(problem, EXIT.usage);
  return { root, folder: { stateDir, gitDir: ensureFolderGitDir(stateDir, root) } };
}

/**
 * What each problem is to a script: git missing is the machine's setup (like a missing key), no
 * repository is running it in the wrong place, a repository git can't read is a failure.
 */
const EXIT_OF: Record<RepoProblemCode, ExitCode> = {
  'git-missing': EXIT.config,
  'not-a-repo': EXIT.usage,
  'git-failed': EXIT.failed,
};

/**
 * The root of the repository holding `cwd`; otherwise a UserError that says which of three
 * problems it is (git missing, no repository, git failing on one) and what to do.
 */
export function requireGitRoot(cwd: string): string {
  const found = gitRoot(cwd);
  if (typeof found === 'string') return found;
  throw new UserError(found.message, EXIT_OF[found.code]);
}

/** The root of the repository holding `cwd`, or why there is none. */
function gitRoot(cwd: string): string | RepoProblem {
  // The common case without a git process (a spawn of this process costs tens of milliseconds
  // before the first model request); git is still required to be there, as it will be used.
  const plain = plainRepo(cwd);
  if (plain && onPath('git')) return plain.root;
  let failure: GitFailure;
  try {
    return execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd,
      encoding: 'utf8',
      // git's messages in English, whatever the user's locale: they are quoted to the user, and matched.
      env: { ...process.env, LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch (err) {
    failure = gitFailure(err);
  }
  return explainRepoProblem(cwd, failure);
}

/** How a git child process failed, for explainRepoProblem; any other failure is a UserError too. */
export function gitFailure(err: unknown): GitFailure {
  const e = err as NodeJS.ErrnoException & { status?: number | null; stderr?: string | Buffer };
  // No exit status: git never ran (ENOENT when it is not on PATH).
  if ((e.status === undefined || e.status === null) && typeof e.code === 'string') return { spawnCode: e.code };
  return { stderr: e.stderr?.toString() ?? '', exitCode: e.status ?? null };
}

/** Throws the same UserError as requireGitRoot when git itself can't be run (for the demo). */
export function requireGit(cwd: string): void {
  try {
    execFileSync('git', ['--version'], { cwd, stdio: 'ignore' });
  } catch (err) {
    const problem = explainRepoProblem(cwd, gitFailure(err));
    throw new UserError(problem.message, EXIT_OF[problem.code]);
  }
}

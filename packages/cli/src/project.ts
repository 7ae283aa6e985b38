import { execFileSync } from 'node:child_process';
// The light subpath: this runs before the TUI's first frame, the sandbox package loads later.
import { explainRepoProblem, onPath, plainRepo, type GitFailure, type RepoProblemCode } from '@infinity-code/sandbox/repo-problems';
import { EXIT, UserError, type ExitCode } from './exit-codes.js';

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
  const problem = explainRepoProblem(cwd, failure);
  throw new UserError(problem.message, EXIT_OF[problem.code]);
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

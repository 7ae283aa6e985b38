import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** The repository root holding `cwd`, or `cwd` itself outside a git repository. */
export function projectRoot(cwd: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return cwd;
  }
}

/** The session store of a project (git-ignored by the project's own .gitignore or ours). */
export function sessionStorePath(root: string): string {
  return join(root, '.infinity', 'state.db');
}

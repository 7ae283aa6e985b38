import { execFileSync } from 'node:child_process';
import { EXIT, UserError } from './exit-codes.js';

/** The repository root holding `cwd`, or undefined outside a git repository. */
export function gitRoot(cwd: string): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    return undefined;
  }
}

export function requireGitRoot(cwd: string): string {
  const root = gitRoot(cwd);
  if (!root) {
    throw new UserError(
      `${cwd} is not inside a git repository. Infinity Code edits a sandboxed copy of a git ` +
        'repository and shows you the diff; run it inside one (or create one with `git init`).',
      EXIT.usage,
    );
  }
  return root;
}

import path from 'node:path';
import type { Sandbox } from '@infinity-code/sandbox';
import { SandboxPathError } from '@infinity-code/sandbox/patches';
import { PathEscapeError, ToolError } from './errors.js';

export interface GuardOptions {
  /** The user's repository root: absolute paths under it mean the same file in the sandbox. */
  repoRoot?: string | undefined;
  /** An empty path (or `.`) means the repository root; otherwise it is an error. */
  allowRoot?: boolean;
}

/**
 * Turns a path argument into a repo-relative path inside the sandbox, or throws a
 * PathEscapeError. Checked twice: lexically here (`..`, absolute paths elsewhere), then by the
 * sandbox, which resolves symlinks component by component as commands would see them, so a link
 * pointing out of the repository is refused too. The result never starts with `/` or `..`.
 */
export async function guardPath(sb: Sandbox, raw: string, opts: GuardOptions = {}): Promise<string> {
  const rel = lexicalPath(raw, [sb.root, ...(opts.repoRoot ? [opts.repoRoot] : [])]);
  if (rel === '' && !opts.allowRoot) {
    throw new ToolError(`Path "${raw}" is the repository root, not a file. Give a file path relative to the root.`);
  }
  try {
    await sb.exists(rel);
  } catch (err) {
    if (err instanceof SandboxPathError) {
      // Lexically inside (above): what the sandbox found on the way is a link out, or its own reason.
      const why = err.linkTarget === undefined ? err.why : `goes through a symbolic link that points outside the repository (to ${err.linkTarget})`;
      throw new PathEscapeError(raw, why);
    }
    throw err;
  }
  return rel;
}

/** The lexical half of guardPath, exported for tools that check many paths cheaply. */
export function lexicalPath(raw: string, roots: readonly string[]): string {
  if (raw.includes('\0')) throw new PathEscapeError(raw.replace(/\0/g, '\\0'), 'contains a NUL byte');
  let p = raw.replace(/\\/g, '/').trim();
  if (path.posix.isAbsolute(p)) {
    const inside = roots
      .map((root) => path.posix.relative(root, path.posix.normalize(p)))
      .find((r) => r === '' || (!r.startsWith('..') && !path.posix.isAbsolute(r)));
    if (inside === undefined) throw new PathEscapeError(raw, 'is an absolute path outside the repository');
    p = inside;
  }
  const normal = path.posix.normalize(p === '' ? '.' : p);
  if (normal === '..' || normal.startsWith('../')) throw new PathEscapeError(raw, 'leaves the repository through ".."');
  return normal === '.' ? '' : normal.replace(/\/+$/, '');
}

/** Paths under `.git` belong to git: edits there would corrupt the sandbox's repository. */
export function refuseGitDir(rel: string, raw: string): void {
  if (rel === '.git' || rel.startsWith('.git/')) {
    throw new ToolError(`Path "${raw}" is inside .git, which git manages. Use execute_command with git commands instead.`);
  }
}

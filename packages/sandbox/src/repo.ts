import { lstatSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { GitError, SandboxError } from './errors.js';
import { nulFields, text } from './git.js';
import { explainRepoProblem } from './repo-problems.js';
import { userRepoGit } from './trusted-git.js';

/** Where the user's repository lives; all paths absolute and canonical. */
export interface RepoInfo {
  /** Top of the working tree. */
  root: string;
  /** The repository's git dir (for a linked worktree: its private git dir). */
  gitDir: string;
  /** Shared git dir holding objects and refs. */
  commonDir: string;
  /** True when `<root>/.git` is a directory, which the overlay backends need for the private `.git` overlay. */
  dotGitIsDir: boolean;
}

export async function resolveRepo(anyPath: string): Promise<RepoInfo> {
  return plainRepo(anyPath) ?? askGit(anyPath);
}

/**
 * The common layout, found without running git (a session's open waits for this, and a git
 * process costs a spawn of this large process): the nearest directory at or above `anyPath`
 * holding a `.git` directory with a HEAD, on the same filesystem, owned by this user, whose
 * config names no other work tree, no include and no bare repository. Anything else (a `.git`
 * file of a linked worktree or submodule, GIT_CEILING_DIRECTORIES, a path inside `.git`...) is
 * left to git, as is the error for a path in no repository.
 */
function plainRepo(anyPath: string): RepoInfo | undefined {
  if (process.env.GIT_CEILING_DIRECTORIES || process.env.GIT_DISCOVERY_ACROSS_FILESYSTEM) return undefined;
  // Synchronous: a handful of stat calls, which a session's open waits for (see registry.ts).
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

async function askGit(anyPath: string): Promise<RepoInfo> {
  let out: string;
  try {
    out = text(
      await userRepoGit()(['rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir'], {
        cwd: anyPath,
      }),
    );
  } catch (err) {
    if (!(err instanceof GitError)) throw err;
    // Git missing, no repository, or git failing on one: three problems with three remedies.
    const spawnCode = err.exitCode === undefined ? errnoCode(err.cause) : undefined;
    const problem = explainRepoProblem(anyPath, spawnCode !== undefined ? { spawnCode } : { stderr: err.stderr, exitCode: err.exitCode });
    throw new SandboxError(problem.code === 'git-failed' ? 'git' : problem.code, problem.message, { cause: err });
  }
  const [top, gitDir, common] = out.split('\n');
  if (!top || !gitDir || !common) {
    throw new SandboxError('not-a-repo', `${anyPath} has no working tree (a bare repository?). Run from a checkout.`);
  }
  const root = await realpath(top);
  const realGitDir = await realpath(gitDir);
  // Relative answers of rev-parse are relative to where it ran, not to the top level.
  const commonDir = await realpath(path.resolve(anyPath, common));
  const dotGit = await stat(path.join(root, '.git')).catch(() => undefined);
  return { root, gitDir: realGitDir, commonDir, dotGitIsDir: dotGit?.isDirectory() ?? false };
}

function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Ignored `node_modules` directories of the user's tree. They are not in the snapshot, yet
 * commands need them, so the sandboxes share them copy-on-write (overlay) or copy them.
 */
export async function findHeavyDirs(repo: RepoInfo): Promise<string[]> {
  const out = await userRepoGit()(
    ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory', '--no-empty-directory'],
    { cwd: repo.root },
  );
  return nulFields(out.stdout)
    .filter((p) => p.endsWith('/') && path.posix.basename(p.slice(0, -1)) === 'node_modules')
    .map((p) => p.slice(0, -1))
    .sort();
}

/** True when `inner` is `outer` or lies below it. */
export function isWithin(outer: string, inner: string): boolean {
  const rel = path.relative(outer, inner);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

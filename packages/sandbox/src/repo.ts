import { realpath, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GitError, SandboxError } from './errors.js';
import { ensureFolderGitDir, folderProblem } from './folder-repo.js';
import { nulFields, text } from './git.js';
import { explainRepoProblem, plainRepo } from './repo-problems.js';
import { userRepoGit, userTreeGit } from './trusted-git.js';

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
  /**
   * A folder in no repository (see folder-repo.ts): `root` is the folder, `gitDir` and
   * `commonDir` its private git dir in the state dir, which git must be told, with the folder as
   * its work tree, every time (userTreeGit). Sandboxes of it have no `.git`.
   */
  folder?: true;
}

export interface ResolveOptions {
  /**
   * Outside every repository, work on the folder `anyPath` names, its private git dir kept in
   * this state dir (see folder-repo.ts); without it such a path is refused with 'not-a-repo'.
   */
  folderStateDir?: string;
}

export async function resolveRepo(anyPath: string, opts: ResolveOptions = {}): Promise<RepoInfo> {
  return plainRepo(anyPath) ?? askGit(anyPath, opts);
}

async function askGit(anyPath: string, opts: ResolveOptions): Promise<RepoInfo> {
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
    if (problem.folder && opts.folderStateDir !== undefined) return folderRepo(anyPath, opts.folderStateDir);
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

/** The folder at `anyPath` as a RepoInfo (see RepoInfo.folder), its private git dir made when missing. */
async function folderRepo(anyPath: string, stateDir: string): Promise<RepoInfo> {
  const root = await realpath(anyPath);
  const problem = folderProblem(root, { home: os.homedir() });
  if (problem !== undefined) throw new SandboxError('not-a-repo', problem);
  const gitDir = ensureFolderGitDir(stateDir, root);
  return { root, gitDir, commonDir: gitDir, dotGitIsDir: false, folder: true };
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
  const out = await userTreeGit(repo)(
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

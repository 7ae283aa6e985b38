import path from 'node:path';
import { hostGit, withGitArgs, type GitRunner } from './git.js';
import type { RepoInfo } from './repo.js';

/**
 * The two kinds of git this package runs, and what each may trust.
 *
 * Over sandbox content (hashing a sandbox's files, building diff trees, checking which are
 * ignored, applying into a sandbox, checking out into a copy) git works on files a command wrote,
 * with this process's privileges. Git runs programs its config names (filter drivers, textconv,
 * external diff, merge drivers, fsmonitor, hooks), picked per file by `.gitattributes`, which the
 * sandbox supplies. So that git reads no config a command could have written: not the sandbox's
 * `.git` (commands own it), not the user's global or system config (an unconfined command can
 * write `~/.gitconfig`), only the session's own git dir (plumbing-git-dir.ts), which names no
 * program. A `.gitattributes` naming a driver then runs nothing: git skips undefined drivers.
 *
 * In the user's own repository (snapshots of their tree, applying to it) their config is theirs
 * to use, filters included; only the programs git would start on its own are switched off. In a
 * folder without a repository, that git dir is a private one of ours (folder-repo.ts), outside
 * every sandbox's view, and the user's global config is read as it would be in a repository.
 */

// Each names a program git would run, or rules git would read, from outside the session's git dir.
const SEALED_SWITCHES = [
  '-c',
  'core.fsmonitor=false',
  '-c',
  'core.hooksPath=/dev/null',
  '-c',
  'core.untrackedCache=false',
  '-c',
  'core.attributesFile=/dev/null',
  // The user's global ignore rules were copied into the session's git dir when it was made.
  '-c',
  'core.excludesFile=/dev/null',
];

/** Switches for git in the user's own repository. */
export const USER_REPO_SWITCHES = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null'];

/**
 * No system or global config, no system attributes (config handed down in the environment is
 * never passed on, see cleanGitEnv). HOME and XDG_CONFIG_HOME point nowhere too, for git before
 * 2.32, which ignores GIT_CONFIG_GLOBAL.
 */
function sealedEnv(gitDir: string): Record<string, string> {
  const nowhere = path.join(gitDir, 'no-home');
  return {
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ATTR_NOSYSTEM: '1',
    HOME: nowhere,
    XDG_CONFIG_HOME: nowhere,
  };
}

/**
 * `inner` (a runner that sees the sandbox's view, e.g. BackendSandbox.git()) bound to `gitDir`,
 * the session's own git dir, and no other config: for every git over sandbox content or the
 * session's objects. `gitDir` must be reachable at that path wherever `inner` runs git.
 */
export function sealGit(inner: GitRunner, gitDir: string): GitRunner {
  return (args, opts = {}) => {
    const [all, o] = withGitArgs([`--git-dir=${gitDir}`, ...SEALED_SWITCHES], args, opts);
    return inner(all, { ...o, env: { ...o.env, ...sealedEnv(gitDir) } });
  };
}

/**
 * What sealGit adds to git, for a shell script that runs git itself (as `git "$@" ...`, its
 * arguments) with this environment: the same seal, for several git commands in one process.
 */
export function sealedScript(gitDir: string): { gitArgs: string[]; env: Record<string, string> } {
  return { gitArgs: [`--git-dir=${gitDir}`, ...SEALED_SWITCHES], env: sealedEnv(gitDir) };
}

/** sealGit over git run by this process directly. */
export function sealedGit(gitDir: string): GitRunner {
  return sealGit(hostGit, gitDir);
}

/**
 * What tells git where the user's tree is: nothing in a repository (git finds it from its working
 * directory); in a folder without one, its private git dir and the folder as the work tree (git
 * would find no repository there, or, were one made since, not ours).
 */
export function userTreeArgs(repo: RepoInfo): string[] {
  return repo.folder ? [`--git-dir=${repo.gitDir}`, `--work-tree=${repo.root}`] : [];
}

/** userRepoGit for `repo`'s tree, run with the tree's root as its working directory (see userTreeArgs). */
export function userTreeGit(repo: RepoInfo): GitRunner {
  const pre = [...userTreeArgs(repo), ...USER_REPO_SWITCHES];
  return (args, opts = {}) => hostGit(...withGitArgs(pre, args, opts));
}

/** git in the user's repository, with their config (see USER_REPO_SWITCHES); bound to `gitDir` when given. */
export function userRepoGit(gitDir?: string): GitRunner {
  const pre = [...(gitDir ? [`--git-dir=${gitDir}`] : []), ...USER_REPO_SWITCHES];
  return (args, opts = {}) => hostGit(...withGitArgs(pre, args, opts));
}

import { userRepoGit } from './trusted-git.js';

/** Where the user's repository stands: what the model is told at a session's start. */
export interface RepoSummary {
  /** `main`, `main...origin/main [ahead 1]`, `HEAD (no branch)`, `No commits yet on main`; undefined outside git. */
  branch: string | undefined;
  /** `git status --short` lines, at most `maxLines` of them. */
  changes: string[];
  /** Status lines left out beyond `maxLines`. */
  more: number;
}

/**
 * The user's branch and uncommitted changes, from git in their own repository (their config, no
 * programs git would start on its own: see trusted-git.ts). A repository git can't read gives no
 * branch and no changes: the summary is a courtesy to the model, never a reason to fail a start.
 */
export async function repoSummary(root: string, maxLines = 20): Promise<RepoSummary> {
  let out: string;
  try {
    // --no-renames: detecting them reads every added and deleted file, for a line in a prompt.
    const r = await userRepoGit()(['status', '--porcelain=v1', '--branch', '--no-renames', '--untracked-files=normal'], { cwd: root });
    out = r.stdout.toString('utf8');
  } catch {
    return { branch: undefined, changes: [], more: 0 };
  }
  const lines = out.split('\n').filter((l) => l !== '');
  const head = lines[0]?.startsWith('## ') ? lines.shift()!.slice(3) : undefined;
  return { branch: head, changes: lines.slice(0, maxLines), more: Math.max(0, lines.length - maxLines) };
}

// Git repositories an agent makes inside the repository (`git init sub`, a clone): git never
// puts their files in a tree of ours (`.git` is not a valid path there; `add -A` makes a gitlink
// of a repository with commits and fails on one without). These helpers find them, so a diff can
// leave them out and say so instead of dropping them without a word or failing whole.
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import type { GitOutput, GitRunOptions } from './git.js';
import { GitError } from './errors.js';
import { nulFields } from './git.js';

/**
 * Directories holding a nested repository, from a list of changed paths: those with a `.git`
 * component below the top (the top-level `.git` is the repository's own). Outermost first.
 */
export function nestedRepoDirs(paths: readonly string[]): string[] {
  const dirs = new Set<string>();
  for (const p of paths) {
    const parts = p.split('/');
    const at = parts.findIndex((part, i) => i > 0 && part === '.git');
    if (at > 0) dirs.add(parts.slice(0, at).join('/'));
  }
  return [...dirs].filter((d) => ![...dirs].some((o) => o !== d && d.startsWith(`${o}/`))).sort();
}

/**
 * Of the directories above `paths`, those holding a `.git` entry in the view at `root` (a host
 * path), outermost first. Only real directories count: through a symlink, `.git` would be
 * looked up wherever the link points.
 */
export async function reposAbove(root: string, paths: readonly string[]): Promise<Set<string>> {
  const realDir = new Map<string, Promise<boolean>>();
  const hasGit = new Map<string, Promise<boolean>>();
  const memo = (cache: Map<string, Promise<boolean>>, key: string, f: () => Promise<boolean>) => {
    let v = cache.get(key);
    if (!v) cache.set(key, (v = f()));
    return v;
  };
  const found = new Set<string>();
  await Promise.all(
    paths.map(async (p) => {
      // Slices of the path, not joins of its parts: it may be a thousand directories deep.
      for (let at = p.indexOf('/'); at > 0; at = p.indexOf('/', at + 1)) {
        const dir = p.slice(0, at);
        const isDir = await memo(realDir, dir, async () => (await lstat(path.join(root, dir)).catch(() => undefined))?.isDirectory() === true);
        if (!isDir) return;
        if (await memo(hasGit, dir, async () => (await lstat(path.join(root, dir, '.git')).catch(() => undefined)) !== undefined)) {
          found.add(dir);
          return;
        }
      }
    }),
  );
  return found;
}

/** Runs git with arguments after the caller's fixed ones (git dir, work tree, config). */
export type BoundGit = (args: readonly string[], opts?: GitRunOptions) => Promise<GitOutput>;

/**
 * `git add -A` over `pathspec`, leaving out nested repositories when git refuses one (a
 * repository without a commit makes the whole add fail). Returns the directories left out, and
 * the stderr of the add that was made (its warnings name what it could not read and skipped).
 * The common case, no nested repository without commits, costs the one add it always did.
 */
export async function addAllButNestedRepos(git: BoundGit, pathspec: readonly string[]): Promise<{ repos: string[]; stderr: string }> {
  const args = ['add', '-A', '--', ...pathspec];
  const first = await git(args, { okExitCodes: [128] });
  if (first.exitCode === 0) return { repos: [], stderr: first.stderr };
  if (!/does not have a commit checked out/.test(first.stderr)) throw new GitError(args, first.stderr, first.exitCode);
  // Untracked nested repositories are listed as "dir/"; everything else `add` would take as files.
  const listed = nulFields((await git(['ls-files', '-o', '-z', '--exclude-standard', '--', ...pathspec])).stdout);
  const repos = listed.filter((p) => p.endsWith('/')).map((p) => p.slice(0, -1));
  const second = await git([...args, ...repos.map((r) => `:(exclude,literal)${r}`)]);
  return { repos, stderr: second.stderr };
}

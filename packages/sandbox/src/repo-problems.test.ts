import { execFileSync } from 'node:child_process';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { explainRepoProblem, findDotGit, type GitFailure } from './repo-problems.js';
import { cleanupTempDirs, makeRepo, tempDir } from './test-support/fixtures.js';

afterEach(cleanupTempDirs);

/** Runs the real `git rev-parse --show-toplevel` in `cwd` and returns how it failed. */
function revParse(cwd: string, env: NodeJS.ProcessEnv = process.env): GitFailure {
  try {
    execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd, env: { ...env, LC_ALL: 'C' }, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { status?: number | null; stderr?: Buffer };
    if (e.status === undefined || e.status === null) return { spawnCode: e.code! };
    return { stderr: e.stderr?.toString() ?? '', exitCode: e.status };
  }
  throw new Error(`git found a repository at ${cwd}`);
}

describe('explainRepoProblem: git missing, no repository and git failing are three problems', () => {
  it('git not on PATH: says to install it', async () => {
    const dir = await tempDir('ic-nogit-');
    // A PATH that holds only an empty directory: no git on it.
    const failure = revParse(dir, { ...process.env, PATH: await tempDir('ic-empty-path-') });
    expect(failure).toEqual({ spawnCode: 'ENOENT' });
    const p = explainRepoProblem(dir, failure);
    expect(p.code).toBe('git-missing');
    expect(p.message).toMatch(/^git is not installed, or not on your PATH\. .*Install git/);
    expect(p.message).not.toMatch(/not inside a git repository/);
  });

  it('a directory in no repository: says to run inside one, and that it is a folder that can be worked on as it is', async () => {
    const dir = await tempDir('ic-norepo-');
    const p = explainRepoProblem(dir, revParse(dir));
    expect(p).toEqual({
      code: 'not-a-repo',
      message: expect.stringMatching(new RegExp(`^${dir} is not inside a git repository\\..*git init`)),
      folder: true,
    });
  });

  it('inside a .git directory: a repository without a working tree, not a failing git (nor a folder)', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const inside = path.join(repo, '.git');
    const p = explainRepoProblem(inside, revParse(inside));
    expect(p.code).toBe('not-a-repo');
    expect(p.folder).toBeUndefined();
    expect(p.message).toMatch(/\.git directory or a bare repository.*working tree of a checkout/);
  });

  it('a repository git rejects (its HEAD damaged): names the .git, quotes git, says how to look', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    await writeFile(path.join(repo, '.git', 'HEAD'), 'garbage\n');
    await mkdir(path.join(repo, 'deep', 'er'), { recursive: true });
    const p = explainRepoProblem(path.join(repo, 'deep', 'er'), revParse(path.join(repo, 'deep', 'er')));
    expect(p.code).toBe('git-failed');
    expect(p.message).toBe(
      `git cannot read the repository in ${repo} (git says: fatal: not a git repository (or any of the parent directories): .git). ` +
        `Its ${repo}/.git may be damaged (a broken .git/HEAD is a common cause): run \`git status\` in ${repo} to see what is wrong, ` +
        'repair it, and run again.',
    );
  });

  it("a linked worktree's .git file pointing nowhere is a git failure too", async () => {
    const dir = await tempDir('ic-wt-');
    await writeFile(path.join(dir, '.git'), 'gitdir: /nonexistent/worktree\n');
    const p = explainRepoProblem(dir, revParse(dir));
    expect(p.code).toBe('git-failed');
    expect(p.message).toContain('git says: fatal: not a git repository: /nonexistent/worktree');
  });

  it('a directory that is gone is not mistaken for git missing', () => {
    expect(explainRepoProblem('/nonexistent/dir', { spawnCode: 'ENOENT' }).code).toBe('not-a-repo');
  });
});

describe('findDotGit', () => {
  it('finds the nearest .git at or above a directory, a dangling symlink included', async () => {
    const repo = await makeRepo({ 'a/b/c.txt': 'c\n' });
    expect(findDotGit(path.join(repo, 'a', 'b'))).toBe(path.join(repo, '.git'));
    const other = await tempDir('ic-link-');
    await symlink('/nonexistent', path.join(other, '.git'));
    expect(findDotGit(other)).toBe(path.join(other, '.git'));
  });
});

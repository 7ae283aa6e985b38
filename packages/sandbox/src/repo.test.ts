import { mkdir, realpath, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { resolveRepo } from './repo.js';
import { cleanupTempDirs, git, makeRepo, tempDir } from './test-support/fixtures.js';

afterEach(cleanupTempDirs);

/** What git itself says about `dir`, in RepoInfo's terms. */
async function gitSays(dir: string) {
  const [top, gitDir, common] = (await git(dir, 'rev-parse', '--show-toplevel', '--absolute-git-dir', '--git-common-dir')).split('\n');
  return { root: await realpath(top), gitDir: await realpath(gitDir), commonDir: await realpath(path.resolve(dir, common)) };
}

// The common layout is found without running git; every layout must come out as git sees it.
describe('finding the repository', () => {
  it('agrees with git: from the top, from a subdirectory, in a linked worktree, with core.worktree, in a nested repository', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'sub/b.txt': 'b\n' });
    const linked = path.join(await tempDir('ic-linked-'), 'wt');
    await git(repo, 'worktree', 'add', '-q', '--detach', linked);
    const nested = path.join(repo, 'sub', 'nested');
    await mkdir(nested);
    await git(nested, 'init', '-q');
    const elsewhere = await makeRepo({ 'c.txt': 'c\n' });
    const tree = await tempDir('ic-worktree-');
    await git(elsewhere, 'config', 'core.worktree', tree);
    await writeFile(path.join(tree, 'd.txt'), 'd\n');
    for (const dir of [repo, path.join(repo, 'sub'), linked, nested, elsewhere]) {
      const found = await resolveRepo(dir);
      expect({ root: found.root, gitDir: found.gitDir, commonDir: found.commonDir }, dir).toEqual(await gitSays(dir));
    }
    expect((await resolveRepo(linked)).dotGitIsDir).toBe(false);
    expect((await resolveRepo(repo)).dotGitIsDir).toBe(true);
  });

  it('a path in no repository, or inside .git, gets git\'s own answer', async () => {
    await expect(resolveRepo(await tempDir('ic-norepo-'))).rejects.toMatchObject({ code: 'not-a-repo' });
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    await expect(resolveRepo(path.join(repo, '.git'))).rejects.toMatchObject({ code: 'not-a-repo' });
  });
});

import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { countFolderFiles, ensureFolderGitDir, folderProblem, folderStateDir, takeFolderNotice } from './folder-repo.js';
import { gc, openSession, SandboxError } from './index.js';
import { cleanupTempDirs, git, makeRepo, tempDir, writeFiles } from './test-support/fixtures.js';

afterEach(cleanupTempDirs);

describe('folderProblem', () => {
  it('refuses / and the home directory (or what holds it), saying to cd into a project folder', async () => {
    const home = await tempDir('ic-home-');
    expect(folderProblem('/', { home })).toMatch(/^\/ is the whole filesystem, not a project folder: cd into a project folder/);
    expect(folderProblem(home, { home })).toMatch(new RegExp(`^${home} is your home directory, not a project folder: cd into a project folder`));
    expect(folderProblem(path.dirname(home), { home })).toMatch(/holds your home directory.*cd into a project folder/);
    const project = path.join(home, 'project');
    await mkdir(project);
    expect(folderProblem(project, { home })).toBeUndefined();
  });

  it('refuses a folder beyond maxFiles, not counting node_modules, nested repositories and .infinity', async () => {
    const folder = await tempDir('ic-folder-');
    await writeFiles(folder, {
      'a.txt': 'a',
      'src/b.txt': 'b',
      'src/c.txt': 'c',
      'node_modules/p/index.js': 'x',
      'web/node_modules/q/index.js': 'x',
      '.infinity/state.db': 'x',
      'vendor/lib/one.txt': '1',
      'vendor/lib/two.txt': '2',
    });
    await git(path.join(folder, 'vendor', 'lib'), 'init', '-q');
    // a.txt, src/b.txt, src/c.txt, and the nested repository as one entry.
    expect(countFolderFiles(folder, 100)).toBe(4);
    expect(folderProblem(folder, { maxFiles: 4 })).toBeUndefined();
    expect(folderProblem(folder, { maxFiles: 3 })).toMatch(
      new RegExp(`^${folder} is not a git repository and holds more than 3 files .*too slow.*cd into a project folder.*git init`),
    );
    // The walk stops once past the limit.
    expect(countFolderFiles(folder, 1)).toBe(2);
  });
});

describe("a folder's private git dir", () => {
  it('is made once per folder, under the state dir, with no setting that runs a program', async () => {
    const stateDir = await tempDir('ic-state-');
    const folder = await tempDir('ic-folder-');
    const gitDir = ensureFolderGitDir(stateDir, folder);
    expect(gitDir).toBe(path.join(folderStateDir(stateDir, folder), 'git'));
    expect(ensureFolderGitDir(stateDir, folder)).toBe(gitDir);
    expect(await readFile(path.join(gitDir, 'config'), 'utf8')).toBe('[core]\n\trepositoryformatversion = 0\n\tbare = false\n');
    expect((await readdir(gitDir)).sort()).toEqual(['HEAD', 'config', 'info', 'objects', 'refs']);
    expect(await readdir(folder)).toEqual([]);
    expect(ensureFolderGitDir(stateDir, `${folder}-other`)).not.toBe(gitDir);
  });

  it('gives its notice once per folder', async () => {
    const stateDir = await tempDir('ic-state-');
    const folder = await tempDir('ic-folder-');
    expect(takeFolderNotice(stateDir, folder)).toBe(
      `${folder} is not a git repository: Infinity Code keeps its snapshots in ${stateDir}; your folder is not changed until you accept.`,
    );
    expect(takeFolderNotice(stateDir, folder)).toBeUndefined();
    expect(takeFolderNotice(stateDir, `${folder}-other`)).toMatch(/is not a git repository/);
  });

  it('is removed by gc once its folder is gone', async () => {
    const stateDir = await tempDir('ic-state-');
    const kept = await tempDir('ic-folder-');
    const gone = await tempDir('ic-folder-');
    ensureFolderGitDir(stateDir, kept);
    ensureFolderGitDir(stateDir, gone);
    await rm(gone, { recursive: true });
    const report = await gc({ stateDir });
    expect(report.removedFolders).toEqual([folderStateDir(stateDir, gone)]);
    expect(existsSync(folderStateDir(stateDir, gone))).toBe(false);
    expect(existsSync(path.join(folderStateDir(stateDir, kept), 'git', 'HEAD'))).toBe(true);
  });
});

describe('openSession outside a repository', () => {
  it('refuses a folder unless allowFolder is given', async () => {
    const folder = await tempDir('ic-folder-');
    const err = await openSession({ repo: folder, stateDir: await tempDir('ic-state-') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxError);
    expect(err).toMatchObject({ code: 'not-a-repo' });
  });

  it('refuses the home directory even with allowFolder, creating nothing', async () => {
    const home = await tempDir('ic-home-');
    const stateDir = await tempDir('ic-state-');
    const before = process.env.HOME;
    process.env.HOME = home;
    try {
      const err = await openSession({ repo: home, stateDir, allowFolder: true }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'not-a-repo', message: expect.stringMatching(/is your home directory.*cd into a project folder/) });
    } finally {
      process.env.HOME = before;
    }
    expect(await readdir(home)).toEqual([]);
    expect(existsSync(path.join(stateDir, 'folders'))).toBe(false);
  });

  it('a directory inside a repository stays part of it with allowFolder', async () => {
    const repo = await makeRepo({ 'sub/a.txt': 'a\n' });
    const session = await openSession({ repo: path.join(repo, 'sub'), stateDir: await tempDir('ic-state-'), allowFolder: true });
    try {
      expect(session.repo).toMatchObject({ root: repo, gitDir: path.join(repo, '.git') });
      expect(session.repo.folder).toBeUndefined();
    } finally {
      await session.close();
    }
  });
});

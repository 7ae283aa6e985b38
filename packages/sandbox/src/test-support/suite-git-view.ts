import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { Sandbox } from '../index.js';
import { COMMIT_REFUSAL } from '../sandbox-git-seed.js';
import type { SuiteContext } from './backend-suite.js';
import { git, makeRepo, tempDir } from './fixtures.js';

const IDENTITY = '-c user.name=model -c user.email=model@localhost';

/** A command's stdout, trimmed; the command must succeed. */
async function out(sb: Sandbox, command: string): Promise<string> {
  const r = await sb.run(command);
  expect(r, command).toMatchObject({ exitCode: 0 });
  return r.stdout.trim();
}

/** `git status --porcelain` in the sandbox, a line per path, sorted. */
async function status(sb: Sandbox): Promise<string[]> {
  const r = await sb.run('git status --porcelain');
  expect(r).toMatchObject({ exitCode: 0 });
  return r.stdout.split('\n').filter(Boolean).sort();
}

/** What git run by commands in a sandbox shows: the user's branch, history and uncommitted changes. */
export function registerGitViewTests(s: SuiteContext): void {
  it("git in a sandbox shows the user's branch and history, and their uncommitted changes (modified, staged, untracked, deleted) as uncommitted", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd.txt': 'd\n' });
    await writeFile(path.join(repo, 'c.txt'), 'c, second\n');
    await git(repo, 'commit', '-qam', 'second');
    const head = await git(repo, 'rev-parse', 'HEAD');
    await writeFile(path.join(repo, 'a.txt'), 'a, modified\n');
    await writeFile(path.join(repo, 'b.txt'), 'b, staged\n');
    await git(repo, 'add', 'b.txt');
    await writeFile(path.join(repo, 'u.txt'), 'untracked\n');
    await rm(path.join(repo, 'd.txt'));
    const session = await s.open(repo);
    const sb = await session.create();

    expect(await out(sb, 'git symbolic-ref HEAD')).toBe('refs/heads/main');
    expect(await out(sb, 'git rev-parse HEAD')).toBe(head);
    expect(await out(sb, 'git log --format=%s')).toBe('second\ninitial');
    expect(await status(sb)).toEqual([' D d.txt', ' M a.txt', ' M b.txt', '?? u.txt']);
    expect(await out(sb, 'git diff -- a.txt')).toContain('-a\n+a, modified');

    // The model's work shows on top; what reaches the user's review is the model's alone.
    await sb.writeFile('c.txt', 'c, by the model\n');
    expect(await status(sb)).toEqual([' D d.txt', ' M a.txt', ' M b.txt', ' M c.txt', '?? u.txt']);
    expect((await sb.diff()).files.map((f) => f.path)).toEqual(['c.txt']);

    // The branch is pinned in the sandbox: the user's next commit does not move it there.
    await git(repo, 'commit', '-qm', 'third');
    const later = await session.create('later');
    for (const sandbox of [sb, later]) {
      expect(await out(sandbox, 'git rev-parse HEAD')).toBe(head);
      expect(await out(sandbox, 'git log -1 --format=%s')).toBe('second');
    }
    expect(await status(later)).toEqual([' D d.txt', ' M a.txt', ' M b.txt', '?? u.txt']);
    expect(await git(repo, 'rev-parse', 'HEAD~1')).toBe(head);
  });

  it("a detached HEAD stays detached at the user's commit", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const first = await git(repo, 'rev-parse', 'HEAD');
    await writeFile(path.join(repo, 'a.txt'), 'a, second\n');
    await git(repo, 'commit', '-qam', 'second');
    await git(repo, 'checkout', '-q', '--detach', first);
    const session = await s.open(repo);
    const sb = await session.create();

    expect(await sb.run('git symbolic-ref -q HEAD')).toMatchObject({ exitCode: 1, stdout: '' });
    expect(await out(sb, 'git rev-parse HEAD')).toBe(first);
    expect(await status(sb)).toEqual([]);
  });

  it('an unborn HEAD names the unborn branch with an empty index, and follows the first commit the user makes', async () => {
    const repo = await tempDir('ic-repo-');
    await git(repo, 'init', '-q', '-b', 'trunk');
    await mkdir(path.join(repo, 'sub'));
    await writeFile(path.join(repo, 'a.txt'), 'a\n');
    await writeFile(path.join(repo, 'sub', 'b.txt'), 'b\n');
    // Staged by the user: the sandbox's index is HEAD's tree all the same (empty here).
    await git(repo, 'add', 'a.txt');
    const session = await s.open(repo);
    const sb = await session.create();

    expect(await out(sb, 'git symbolic-ref HEAD')).toBe('refs/heads/trunk');
    expect((await sb.run('git rev-parse --verify -q HEAD')).exitCode).not.toBe(0);
    expect(await out(sb, 'git ls-files')).toBe('');
    expect(await status(sb)).toEqual(['?? a.txt', '?? sub/']);

    await git(repo, 'add', '-A');
    await git(repo, 'commit', '-qm', 'first');
    await writeFile(path.join(repo, 'n.txt'), 'new\n');
    expect((await session.refreshBase()).files).toEqual(['n.txt']);
    expect(await out(sb, 'git symbolic-ref HEAD')).toBe('refs/heads/trunk');
    expect(await out(sb, 'git rev-parse HEAD')).toBe(await git(repo, 'rev-parse', 'HEAD'));
    expect(await out(sb, 'git ls-files')).toBe('a.txt\nsub/b.txt');
    expect(await status(sb)).toEqual(['?? n.txt']);
  });

  it("a commit is refused with how changes reach the user, whatever the user's own hooks say; stash works", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', '.githooks/pre-commit': { content: '#!/bin/sh\nexit 0\n', mode: 0o755 } });
    await git(repo, 'config', 'core.hooksPath', '.githooks');
    await git(repo, 'branch', 'other');
    await git(repo, 'checkout', '-q', 'other');
    await writeFile(path.join(repo, 'o.txt'), 'other\n');
    await git(repo, 'add', 'o.txt');
    await git(repo, 'commit', '-qm', 'on other');
    await git(repo, 'checkout', '-q', 'main');
    const head = await git(repo, 'rev-parse', 'HEAD');
    const session = await s.open(repo);
    const sb = await session.create();
    await sb.writeFile('a.txt', 'a, by the model\n');

    for (const command of [
      `git ${IDENTITY} commit -qam model`,
      `git ${IDENTITY} commit -qam model --no-verify`,
      `git ${IDENTITY} commit -q --amend -m amended`,
      // From a subdirectory, where git still finds the sandbox's hooks.
      `mkdir -p sub && cd sub && git ${IDENTITY} commit -qam model`,
      `git ${IDENTITY} cherry-pick other`,
      // A rebase wants a clean tree before it asks its hook.
      `git stash -q && git ${IDENTITY} rebase other`,
    ]) {
      const r = await sb.run(command);
      expect(r.exitCode, command).not.toBe(0);
      expect(r.stderr, command).toContain(COMMIT_REFUSAL);
      await sb.run('git cherry-pick --abort; git stash pop -q; true');
    }
    expect(await out(sb, 'git rev-parse HEAD')).toBe(head);
    expect(await out(sb, 'git stash -q && cat a.txt && git stash pop -q && cat a.txt')).toBe('a\na, by the model');
    expect(await status(sb)).toEqual([' M a.txt']);
    expect((await sb.diff()).files.map((f) => f.path)).toEqual(['a.txt']);
  });

  it('a refresh moves the pinned branch and the index along with the user\'s commits and branch switches; a sandbox that committed anyway is left alone', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' });
    await writeFile(path.join(repo, 'a.txt'), 'a, by the user\n');
    const session = await s.open(repo);
    const sb = await session.create('sb');
    const committed = await session.create('committed');
    await sb.writeFile('c.txt', 'c, by the model\n');
    // Past the hooks: the sandbox's history is its own from then on.
    await committed.writeFile('c.txt', 'c, committed\n');
    await out(committed, `git -c core.hooksPath=/dev/null ${IDENTITY} commit -qam own`);
    const own = await out(committed, 'git rev-parse HEAD');

    // The user commits their edit, then edits another file.
    await git(repo, 'commit', '-qam', 'by the user');
    await writeFile(path.join(repo, 'b.txt'), 'b, by the user\n');
    const userHead = await git(repo, 'rev-parse', 'HEAD');
    expect((await session.refreshBase()).files).toEqual(['b.txt']);

    expect(await out(sb, 'git symbolic-ref HEAD')).toBe('refs/heads/main');
    expect(await out(sb, 'git rev-parse HEAD')).toBe(userHead);
    expect(await out(sb, 'git log --format=%s')).toBe('by the user\ninitial');
    expect(await status(sb)).toEqual([' M b.txt', ' M c.txt']);
    expect(await out(committed, 'git rev-parse HEAD')).toBe(own);
    expect(await out(committed, 'git log -1 --format=%s')).toBe('own');

    // Only the working tree changes: HEAD stays.
    await writeFile(path.join(repo, 'b.txt'), 'b, again\n');
    expect((await session.refreshBase()).files).toEqual(['b.txt']);
    expect(await out(sb, 'git rev-parse HEAD')).toBe(userHead);
    expect(await status(sb)).toEqual([' M b.txt', ' M c.txt']);

    // The user switches to a new branch and commits there.
    await git(repo, 'checkout', '-qb', 'topic');
    await git(repo, 'commit', '-qam', 'on topic');
    await writeFile(path.join(repo, 'a.txt'), 'a, on topic\n');
    expect((await session.refreshBase()).files).toEqual(['a.txt']);
    expect(await out(sb, 'git symbolic-ref HEAD')).toBe('refs/heads/topic');
    expect(await out(sb, 'git rev-parse HEAD')).toBe(await git(repo, 'rev-parse', 'HEAD'));
    expect(await out(sb, 'git rev-parse main')).toBe(userHead);
    expect(await status(sb)).toEqual([' M a.txt', ' M c.txt']);
    expect((await sb.diff()).files.map((f) => f.path)).toEqual(['c.txt']);
  });

  it('a sandbox left detached at the snapshot commit (made before HEAD followed the user) still follows refreshes', async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    const session = await s.open(repo);
    const sb = await session.create();
    await out(sb, `git update-ref --no-deref HEAD ${session.snapshot.commit} && git read-tree HEAD`);
    await writeFile(path.join(repo, 'a.txt'), 'a, by the user\n');
    await session.refreshBase();
    expect(await out(sb, 'git rev-parse HEAD')).toBe(session.snapshot.commit);
    expect(await status(sb)).toEqual([]);
  });

  it("the sandbox's config keeps the user's settings, drops credentials, and names the sandbox's hooks over the user's", async () => {
    const repo = await makeRepo({ 'a.txt': 'a\n' });
    await git(repo, 'config', 'remote.origin.url', 'https://user:secret-token@example.invalid/r.git');
    await git(repo, 'config', 'core.hooksPath', '/nowhere');
    await git(repo, 'config', 'test.kept', 'yes');
    const session = await s.open(repo);
    const sb = await session.create();
    expect(await out(sb, 'git config test.kept')).toBe('yes');
    expect(await out(sb, 'git config remote.origin.url')).toBe('https://example.invalid/r.git');
    const hooks = await out(sb, 'git config core.hooksPath');
    expect(hooks).toMatch(/infinity-code-hooks$/);
    await out(sb, 'cd "$(git rev-parse --show-toplevel)" && test -x "$(git config core.hooksPath)/pre-commit"');
    // The user's own config is as it was.
    const userConfig = await readFile(path.join(repo, '.git', 'config'), 'utf8');
    expect(userConfig).toContain('secret-token');
    expect(userConfig).not.toContain('infinity-code-hooks');
  });
}
